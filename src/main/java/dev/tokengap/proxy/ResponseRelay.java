package dev.tokengap.proxy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.handler.timeout.ReadTimeoutException;
import io.netty.util.ByteProcessor;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

import dev.tokengap.metrics.ExchangeRecorder;
import dev.tokengap.metrics.StreamOutcome;
import dev.tokengap.sse.SseEventKind;
import dev.tokengap.sse.SseEventScanner;
import dev.tokengap.timing.NanoClock;

/**
 * Relays one upstream response body to the client, one upstream buffer at a time, and times
 * every SSE event at the moment its write to the client completes.
 *
 * <pre>
 *  upstream loop                         client loop
 *  onNext(buf) ── scan bytes in place ──▶ writeAndFlush(buf) ── write done ──▶ operationComplete
 *      ▲            (count events)                                   │ record events at this time
 *      └──────────────────── request(1) ─────────────────────────────┘
 * </pre>
 *
 * Exactly one buffer is in flight: the next is requested only when the previous one has been
 * handed to the client socket, so a client that stops reading stops the upstream read (TCP
 * backpressure reaches the engine) and tokengap holds at most one buffer per stream. Buffers pass
 * through unchanged and unmerged, each flushed at once. Terminal signals from upstream and the
 * client hop onto the client loop, where the outcome is decided exactly once.
 */
final class ResponseRelay implements CoreSubscriber<ByteBuf>, ChannelFutureListener, ByteProcessor, Runnable {

	private final Channel client;

	private final ExchangeRecorder recorder;

	private final SseEventScanner scanner;

	private final NanoClock clock;

	private final int status;

	private final MonoSink<Void> sink;

	private Subscription upstream;

	private long arrivalNanos;

	private long writeStartNanos;

	private ByteBuf inFlight;

	private int pendingContent;

	private long pendingTokens = -1;

	/** Socket wait of the writes since the last content event (bytes of no content event). */
	private long earlierWaitNanos;

	private long lastWriteNanos = -1;

	private boolean writing;

	private boolean done;

	private volatile boolean cancelled;

	private volatile boolean upstreamEnded;

	private volatile Throwable upstreamError;

	private ResponseRelay(Channel client, ExchangeRecorder recorder, boolean eventStream, NanoClock clock, int status,
			MonoSink<Void> sink) {
		this.client = client;
		this.recorder = recorder;
		this.scanner = eventStream ? new SseEventScanner() : null;
		this.clock = clock;
		this.status = status;
		this.sink = sink;
	}

	/**
	 * Relays {@code body} to {@code client}; the returned Mono completes when the exchange has an
	 * outcome. Cancelling it (the client went away) cancels the upstream body, which closes the
	 * upstream connection so the engine aborts the request.
	 */
	static Mono<Void> relay(reactor.core.publisher.Flux<ByteBuf> body, Channel client, ExchangeRecorder recorder,
			boolean eventStream, NanoClock clock, int status) {
		return Mono.create((sink) -> {
			ResponseRelay relay = new ResponseRelay(client, recorder, eventStream, clock, status, sink);
			sink.onCancel(relay::clientGone);
			body.subscribe(relay);
			client.closeFuture().addListener(relay);
		});
	}

	@Override
	public void onSubscribe(Subscription s) {
		this.upstream = s;
		s.request(1);
	}

	@Override
	public void onNext(ByteBuf buf) {
		if (this.cancelled) {
			return;
		}
		if (!buf.isReadable()) {
			this.upstream.request(1);
			return;
		}
		this.arrivalNanos = this.clock.nanoTime();
		if (this.scanner != null) {
			buf.forEachByte(this);
		}
		this.writing = true;
		// The upstream receiver releases buf when onNext returns; the write owns this retain.
		this.inFlight = buf.retain();
		onClientLoop(this);
	}

	/**
	 * Writes the buffer in flight, on the client loop. Run as this object itself (one buffer is in
	 * flight at a time), so a write allocates no task; the time it starts separates a busy event
	 * loop (before) from a full client socket (after).
	 */
	@Override
	public void run() {
		ByteBuf buf = this.inFlight;
		this.inFlight = null;
		this.writeStartNanos = this.clock.nanoTime();
		// Usually the socket takes the whole buffer inside this call. A void promise spares a
		// promise and a listener call per event (and the encoder's promise combiner); whether the
		// write completed is read from the outbound buffer afterwards. A failed write fires
		// exceptionCaught and closes the channel instead, which ends the stream through closeFuture.
		this.client.writeAndFlush(buf, this.client.voidPromise());
		if (!this.client.isActive()) {
			return;
		}
		if (nothingPending()) {
			written();
		}
		else {
			// The client's socket is full (or earlier bytes were still queued): completes once
			// everything before it has been written.
			this.client.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(this);
		}
	}

	private boolean nothingPending() {
		ChannelOutboundBuffer outbound = this.client.unsafe().outboundBuffer();
		return outbound != null && outbound.totalPendingWriteBytes() == 0;
	}

	@Override
	public boolean process(byte value) {
		SseEventKind kind = this.scanner.accept(value);
		if (kind != null) {
			if (kind.isContent()) {
				this.pendingContent++;
			}
			long tokens = this.scanner.completionTokens();
			if (tokens >= 0) {
				this.pendingTokens = tokens;
			}
		}
		return true;
	}

	@Override
	public void operationComplete(ChannelFuture future) {
		if (future == this.client.closeFuture()) {
			clientGone();
			return;
		}
		if (!future.isSuccess()) {
			this.writing = false;
			finish(StreamOutcome.CLIENT_CANCELLED);
			return;
		}
		written();
	}

	private void written() {
		this.writing = false;
		recordWrite(this.clock.nanoTime());
		if (this.upstreamEnded) {
			upstreamTerminated();
		}
		else if (!this.done) {
			this.upstream.request(1);
		}
	}

	private void recordWrite(long writeNanos) {
		this.lastWriteNanos = writeNanos;
		this.recorder.bodyWritten(writeNanos);
		if (this.pendingContent == 0) {
			this.earlierWaitNanos += writeNanos - this.writeStartNanos;
		}
		for (int i = 0; i < this.pendingContent; i++) {
			this.recorder.contentWritten(this.arrivalNanos, this.writeStartNanos, writeNanos, this.earlierWaitNanos);
			this.earlierWaitNanos = 0;
		}
		if (this.pendingTokens >= 0) {
			this.recorder.completionTokens(this.pendingTokens);
		}
		this.pendingContent = 0;
		this.pendingTokens = -1;
	}

	@Override
	public void onError(Throwable error) {
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
		Throwable error = this.upstreamError;
		if (error == null) {
			finish(StreamOutcome.COMPLETED);
		}
		else {
			finish((error instanceof ReadTimeoutException) ? StreamOutcome.UPSTREAM_TIMEOUT
					: StreamOutcome.UPSTREAM_ERROR);
		}
	}

	private void clientGone() {
		this.cancelled = true;
		onClientLoop(() -> finish(StreamOutcome.CLIENT_CANCELLED));
	}

	private void finish(StreamOutcome outcome) {
		if (this.done) {
			return;
		}
		this.done = true;
		this.cancelled = true;
		this.client.closeFuture().removeListener(this);
		if (!this.upstreamEnded && this.upstream != null) {
			this.upstream.cancel();
		}
		long end = (outcome == StreamOutcome.COMPLETED && this.lastWriteNanos >= 0) ? this.lastWriteNanos
				: this.clock.nanoTime();
		this.recorder.finish(this.status, outcome, end);
		if (outcome == StreamOutcome.UPSTREAM_ERROR || outcome == StreamOutcome.UPSTREAM_TIMEOUT) {
			// The response is committed: closing without the terminating chunk is how HTTP/1.1
			// tells the client that the body is incomplete.
			this.client.close();
		}
		this.sink.success();
	}

	private void onClientLoop(Runnable action) {
		if (this.client.eventLoop().inEventLoop()) {
			action.run();
			return;
		}
		try {
			this.client.eventLoop().execute(action);
		}
		catch (java.util.concurrent.RejectedExecutionException ex) {
			action.run();
		}
	}

}
