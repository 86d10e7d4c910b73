package dev.tokengap.proxy;

import java.nio.ByteBuffer;
import java.util.Objects;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.util.concurrent.FastThreadLocal;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Operators;

import dev.tokengap.timing.NanoClock;
import dev.tokengap.timing.ResponseTap;
import dev.tokengap.timing.ResponseTap.Ending;

/**
 * Relays one engine response body to the client, one buffer at a time, each written and
 * flushed on its own, and tells the response's {@link ResponseTap} what happened to the
 * bytes: when they arrived, when their write started, and when the write's own future
 * said the client's socket took them.
 *
 * <pre>
 *  engine loop                             client loop
 *  onNext(buf) ── arrival time ──────────▶ tap.received(bytes) ─▶ writeAndFlush(buf)
 *      ▲                                        │ the write's future completes
 *      │                                        ▼
 *      │                                   tap.written(t)
 *      └──────────────────── request(1) ────────┘
 * </pre>
 *
 * Exactly one buffer is in flight: the next is requested only when the previous one's
 * write completed, so a client that stops reading stops the engine's read (TCP
 * backpressure reaches the engine) and tokengap holds at most one buffer per stream. The
 * bytes pass through unchanged, framed for the client by the server's HTTP codec. Two
 * deadlines watch the relay, checked by one timer that moves with them: a write the
 * client's socket has made no progress on for the send timeout closes the client (and the
 * engine request with it), and an engine that sends nothing for the idle timeout while
 * tokengap waits for it fails the stream. Waiting for a slow client is never the engine's
 * silence. Terminal signals hop onto the client loop, where the relay's ending is said
 * once. Held to the Reactive Streams TCK as a subscriber.
 */
final class ResponseRelay implements CoreSubscriber<ByteBuf>, ChannelFutureListener, Runnable {

	private static final ByteBuffer NO_BYTES = ByteBuffer.allocate(0).asReadOnlyBuffer();

	/** Where each loop copies the bytes it tells a tap of, 4 KiB at a time. */
	private static final FastThreadLocal<ByteBuffer> WINDOW = new FastThreadLocal<>() {

		@Override
		protected ByteBuffer initialValue() {
			return ByteBuffer.allocate(4096);
		}

	};

	private final Channel client;

	private final ResponseTap tap;

	private final NanoClock clock;

	private final Runnable onDone;

	private final long sendTimeoutNanos;

	private final Runnable sendTimedOut;

	private final long idleTimeoutNanos;

	private final LoopDeadline deadline;

	private Subscription upstream;

	private ByteBuf inFlight;

	private long arrivalNanos;

	private boolean writing;

	private boolean done;

	/** Since when tokengap waits for the engine's next buffer (deadline clock), or -1. */
	private long waitingSince = -1;

	/** Since when the write in flight made no progress (deadline clock). */
	private long stuckSince;

	private long stuckBytes;

	private volatile boolean cancelled;

	private volatile boolean upstreamEnded;

	private volatile Throwable upstreamError;

	private ResponseRelay(Channel client, ResponseTap tap, NanoClock clock, Timeouts timeouts, Runnable onDone) {
		this.client = client;
		this.tap = tap;
		this.clock = clock;
		this.sendTimeoutNanos = timeouts.sendNanos();
		this.sendTimedOut = timeouts.sendTimedOut();
		this.idleTimeoutNanos = timeouts.idleNanos();
		this.onDone = onDone;
		this.deadline = new LoopDeadline(client.eventLoop(), this::check);
	}

	/**
	 * Relays {@code body} to {@code client}: {@code onDone} is told once, on the client
	 * loop, when the relay has said its ending, which may be before this returns.
	 * {@link #clientGone()} ends it early.
	 * @param body the engine's response body
	 * @param client the client connection, whose response head was sent
	 * @param tap told what happened to the bytes
	 * @param clock the clock the tap's times are read from
	 * @param timeouts the send and idle timeouts
	 * @param onDone told when the relay is over
	 * @return the relay
	 */
	static ResponseRelay start(Publisher<ByteBuf> body, Channel client, ResponseTap tap, NanoClock clock,
			Timeouts timeouts, Runnable onDone) {
		ResponseRelay relay = new ResponseRelay(client, tap, clock, timeouts, onDone);
		body.subscribe(relay);
		if (!relay.done) {
			client.closeFuture().addListener(relay);
		}
		return relay;
	}

	@Override
	public void onSubscribe(Subscription s) {
		// A second subscription is cancelled (rule 2.5): the body has one.
		if (Operators.validate(this.upstream, s)) {
			this.upstream = s;
			onClientLoop(this::requestNext);
		}
	}

	private void requestNext() {
		if (this.done) {
			return;
		}
		this.waitingSince = this.deadline.now();
		this.deadline.checkBy(this.waitingSince + this.idleTimeoutNanos);
		this.upstream.request(1);
	}

	@Override
	public void onNext(ByteBuf buf) {
		Objects.requireNonNull(buf, "buf");
		if (this.cancelled) {
			return;
		}
		this.arrivalNanos = this.clock.nanoTime();
		// Reactor Netty releases buf when onNext returns; the write owns this retain.
		this.inFlight = buf.retain();
		onClientLoop(this);
	}

	/**
	 * Writes the buffer in flight, on the client loop. Run as this object itself (one
	 * buffer is in flight at a time), so a write allocates no task.
	 */
	@Override
	public void run() {
		ByteBuf buf = this.inFlight;
		this.inFlight = null;
		if (this.done) {
			buf.release();
			return;
		}
		this.waitingSince = -1;
		if (!buf.isReadable()) {
			buf.release();
			requestNext();
			return;
		}
		received(buf);
		this.writing = true;
		this.tap.writeStarted(this.clock.nanoTime());
		ChannelFuture write = this.client.writeAndFlush(buf);
		if (write.isDone()) {
			operationComplete(write);
			return;
		}
		write.addListener(this);
		this.stuckSince = this.deadline.now();
		this.stuckBytes = this.client.bytesBeforeWritable();
		this.deadline.checkBy(this.stuckSince + this.sendTimeoutNanos);
	}

	/**
	 * Tells the tap the buffer's bytes: copied, a window at a time, into an array of the
	 * loop's. The scan reads an array a range at a time but a direct buffer a byte at a
	 * time, and passing the buffer would allocate a view of it for every read; the copy
	 * allocates nothing ({@code SseScannerBenchmark} times the two together). None when
	 * the tap does not read them.
	 */
	private void received(ByteBuf buf) {
		if (!this.tap.readsBytes()) {
			this.tap.received(NO_BYTES, this.arrivalNanos);
			return;
		}
		ByteBuffer window = WINDOW.get();
		byte[] array = window.array();
		for (int index = buf.readerIndex(), end = buf.writerIndex(); index < end;) {
			int length = Math.min(end - index, array.length);
			buf.getBytes(index, array, 0, length);
			window.clear().limit(length);
			this.tap.received(window, this.arrivalNanos);
			index += length;
		}
	}

	@Override
	public void operationComplete(ChannelFuture future) {
		if (future == this.client.closeFuture()) {
			clientGone();
			return;
		}
		if (!this.writing || this.done) {
			return;
		}
		this.writing = false;
		if (!future.isSuccess()) {
			finish(this.client.isActive() ? Ending.WRITE_FAILED : Ending.CLIENT_GONE);
			return;
		}
		this.tap.written(this.clock.nanoTime());
		if (this.upstreamEnded) {
			upstreamTerminated();
		}
		else {
			requestNext();
		}
	}

	/** The relay's one timer: a stuck write, or a silent engine. On the loop. */
	private void check() {
		if (this.done) {
			return;
		}
		long now = this.deadline.now();
		if (this.writing) {
			long pending = this.client.bytesBeforeWritable();
			if (pending != this.stuckBytes) {
				this.stuckBytes = pending;
				this.stuckSince = now;
			}
			if (now - this.stuckSince >= this.sendTimeoutNanos) {
				this.writing = false;
				this.sendTimedOut.run();
				finish(Ending.CLIENT_GONE);
				this.client.close();
				return;
			}
			this.deadline.checkBy(this.stuckSince + this.sendTimeoutNanos);
		}
		else if (this.waitingSince >= 0) {
			if (now - this.waitingSince >= this.idleTimeoutNanos) {
				finish(Ending.ENGINE_TIMED_OUT);
				return;
			}
			this.deadline.checkBy(this.waitingSince + this.idleTimeoutNanos);
		}
	}

	@Override
	public void onError(Throwable error) {
		Objects.requireNonNull(error, "error");
		this.upstreamError = error;
		this.upstreamEnded = true;
		onClientLoop(this::upstreamTerminated);
	}

	@Override
	public void onComplete() {
		this.upstreamEnded = true;
		onClientLoop(this::upstreamTerminated);
	}

	private void upstreamTerminated() {
		if (this.writing || this.done) {
			return;
		}
		finish((this.upstreamError == null) ? Ending.ENGINE_COMPLETED : Ending.ENGINE_FAILED);
	}

	/** The client went away: the relay ends, and the engine request with it. */
	void clientGone() {
		this.cancelled = true;
		onClientLoop(() -> finish(Ending.CLIENT_GONE));
	}

	private void finish(Ending ending) {
		if (this.done) {
			return;
		}
		this.done = true;
		this.cancelled = true;
		this.deadline.cancel();
		this.client.closeFuture().removeListener(this);
		if (!this.upstreamEnded && this.upstream != null) {
			this.upstream.cancel();
		}
		this.tap.ended(ending, this.clock.nanoTime());
		if (ending == Ending.ENGINE_FAILED || ending == Ending.ENGINE_TIMED_OUT || ending == Ending.WRITE_FAILED) {
			// The response is committed: closing without the terminating chunk is how
			// HTTP/1.1 tells the client that the body is incomplete.
			this.client.close();
		}
		this.onDone.run();
	}

	private void onClientLoop(Runnable action) {
		OnLoop.run(this.client.eventLoop(), action);
	}

	/**
	 * The relay's timeouts.
	 *
	 * @param sendNanos how long a write may make no progress
	 * @param sendTimedOut told (on the client loop) when a client is closed for that
	 * @param idleNanos how long the engine may send nothing while it is waited for
	 */
	record Timeouts(long sendNanos, Runnable sendTimedOut, long idleNanos) {
	}

}
