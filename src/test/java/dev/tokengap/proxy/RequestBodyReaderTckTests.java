package dev.tokengap.proxy;

import java.nio.charset.StandardCharsets;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import org.reactivestreams.tck.SubscriberBlackboxVerification;
import org.reactivestreams.tck.TestEnvironment;
import org.testng.annotations.AfterClass;
import reactor.core.CoreSubscriber;

/**
 * The request body's reader as a subscriber of the client's body pieces, held to the
 * Reactive Streams TCK. Its own subscriber asks for the body at once, as the exchange
 * does, and releases it.
 */
public class RequestBodyReaderTckTests extends SubscriberBlackboxVerification<Object> {

	private final EmbeddedChannel channel = new EmbeddedChannel();

	public RequestBodyReaderTckTests() {
		super(new TestEnvironment(1000));
	}

	@AfterClass
	void close() {
		this.channel.close();
	}

	@Override
	public Subscriber<Object> createSubscriber() {
		return new RequestBody.Reader(new BodyTaker(), this.channel, Long.MAX_VALUE);
	}

	@Override
	public Object createElement(int element) {
		return Unpooled.wrappedBuffer(("piece " + element).getBytes(StandardCharsets.UTF_8));
	}

	/** Asks for the body as soon as it is subscribed, and releases it. */
	private static final class BodyTaker implements CoreSubscriber<ByteBuf> {

		@Override
		public void onSubscribe(Subscription s) {
			s.request(1);
		}

		@Override
		public void onNext(ByteBuf body) {
			body.release();
		}

		@Override
		public void onError(Throwable error) {
		}

		@Override
		public void onComplete() {
		}

	}

}
