package dev.tokengap.proxy;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.reactivestreams.Subscriber;
import org.reactivestreams.tck.SubscriberBlackboxVerification;
import org.reactivestreams.tck.TestEnvironment;
import org.testng.annotations.AfterClass;

import dev.tokengap.timing.NanoClock;
import dev.tokengap.timing.ResponseTap;

/**
 * The relay as a subscriber of the engine's response body, held to the Reactive Streams
 * TCK: each relay writes to an embedded client channel of its own, whose writes complete
 * at once, so it asks for the next buffer as soon as one is written.
 */
public class ResponseRelayTckTests extends SubscriberBlackboxVerification<ByteBuf> {

	private static final long AN_HOUR = 3_600_000_000_000L;

	private final List<EmbeddedChannel> clients = new CopyOnWriteArrayList<>();

	public ResponseRelayTckTests() {
		super(new TestEnvironment(1000));
	}

	@AfterClass
	void close() {
		this.clients.forEach(EmbeddedChannel::finishAndReleaseAll);
	}

	@Override
	public Subscriber<ByteBuf> createSubscriber() {
		EmbeddedChannel client = new EmbeddedChannel();
		this.clients.add(client);
		// The relay subscribes itself to the body it is started with: the TCK's
		// publisher subscribes it later.
		AtomicReference<Subscriber<? super ByteBuf>> relay = new AtomicReference<>();
		ResponseRelay.start(relay::set, client, ResponseTap.NONE, NanoClock.SYSTEM,
				new ResponseRelay.Timeouts(AN_HOUR, () -> {
				}, AN_HOUR), () -> {
				});
		@SuppressWarnings("unchecked")
		Subscriber<ByteBuf> started = (Subscriber<ByteBuf>) relay.get();
		return started;
	}

	@Override
	public ByteBuf createElement(int element) {
		return Unpooled.wrappedBuffer(("data: " + element + "\n\n").getBytes(StandardCharsets.UTF_8));
	}

}
