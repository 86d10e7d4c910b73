package dev.tokengap.proxy;

import java.nio.charset.StandardCharsets;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;
import org.testng.annotations.AfterClass;
import reactor.core.publisher.Flux;

/**
 * The request body's read as a publisher, held to the Reactive Streams TCK: it emits one
 * buffer (the whole body), or fails. The TCK's subscribers release nothing, so the pieces
 * are heap buffers that no leak detector tracks.
 */
public class RequestBodyTckTests extends PublisherVerification<ByteBuf> {

	private final EmbeddedChannel channel = new EmbeddedChannel();

	public RequestBodyTckTests() {
		super(new TestEnvironment(1000));
	}

	@AfterClass
	void close() {
		this.channel.close();
	}

	@Override
	public Publisher<ByteBuf> createPublisher(long elements) {
		Flux<ByteBuf> pieces = (elements == 0) ? Flux.empty() : Flux.just(piece("{\"model\":\"m\"}"));
		return new RequestBody(pieces, this.channel, 1024);
	}

	@Override
	public Publisher<ByteBuf> createFailedPublisher() {
		return new RequestBody(Flux.error(new IllegalStateException("the client's body failed")), this.channel, 1024);
	}

	@Override
	public long maxElementsFromPublisher() {
		return 1;
	}

	private static ByteBuf piece(String text) {
		return Unpooled.wrappedBuffer(text.getBytes(StandardCharsets.UTF_8));
	}

}
