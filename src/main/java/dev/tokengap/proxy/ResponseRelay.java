package dev.tokengap.proxy;

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundInvoker;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.ChannelOutboundHandler;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.timeout.ReadTimeoutException;
import io.netty.util.Attribute;
import io.netty.util.AttributeKey;
import io.netty.util.ByteProcessor;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;
import reactor.netty.NettyPipeline;

import dev.tokengap.metrics.ExchangeRecorder;
import dev.tokengap.metrics.StreamOutcome;
import dev.tokengap.sse.SseEventKind;
import dev.tokengap.sse.SseEventScanner;
import dev.tokengap.timing.ContentWrite;
import dev.tokengap.timing.EngineReport;
import dev.tokengap.timing.NanoClock;

/**
 * Relays one upstream response body to the client, one upstream buffer at a time, and
 * times every SSE event at the moment its write to the client completes.
 *
 * <pre>
 *  upstream loop                         client loop
 *  onNext(buf) ── scan bytes in place ──▶ writeAndFlush(buf, voidPromise)
 *      ▲            (note events)           │ the socket took it all: done on return
 *      │                                    │ the socket is full: an empty write's future
 *      │                                    ▼
 *      │                                  written() ── record events at this time
 *      └──────────────────── request(1) ────┘
 * </pre>
 *
 * Each buffer is written with the channel's void promise, so no future or listener is
 * made per event: when the socket takes the whole buffer inside the write call (the usual
 * case), the write is done when the call returns; only when the socket is full does an
 * empty write's future, done once everything before it has been written, tell when it
 * completed.
 *
 * Exactly one buffer is in flight: the next is requested only when the previous one has
 * been handed to the client socket, so a client that stops reading stops the upstream
 * read (TCP backpressure reaches the engine) and tokengap holds at most one buffer per
 * stream. A client whose socket accepts nothing for the send timeout is closed, and the
 * engine request with it. Buffers pass through unchanged and unmerged, each flushed at
 * once. A chunked body goes out framed as the engine framed it ({@link ChunkedFraming}):
 * written past the server codec's encoder, which would decode nothing but frame every
 * buffer again, and scanned only where its bytes are chunk data. The engine's own figures
 * for the request (vLLM's per-request metrics), when an event carries them, reach the
 * recorder the same way, once that event has been written. Terminal signals from upstream
 * and the client hop onto the client loop, where the relay's verdict is said once; the
 * exchange's exit records it.
 */
final class ResponseRelay implements CoreSubscriber<ByteBuf>, ChannelFutureListener, ByteProcessor, Runnable {

	private final Channel client;

	/** Where the body's bytes are written ({@link #bodyWriter}). */
	private final ChannelOutboundInvoker out;

	private final ExchangeRecorder recorder;

	private final SseEventScanner scanner;

	/**
	 * The engine exchange whose chunked body passes through as the engine framed it, or
	 * null when the body comes as decoded content.
	 */
	private final EngineExchange framed;

	private final NanoClock clock;

	/** Told once, on the client loop, when the relay has said its verdict. */
	private final Runnable onDone;

	private final ClientWriteFailures writeFailures;

	private final long sendTimeoutNanos;

	private final Runnable sendTimedOut;

	private final Runnable sendCheck = this::checkSend;

	private Subscription upstream;

	/**
	 * The times of the buffer in flight, told to the recorder for each of its content
	 * events.
	 */
	private final ContentWrite event = new ContentWrite();

	private ByteBuf inFlight;

	/** Choice index of each content event in the buffer in flight, in order. */
	private int[] pendingChoices = new int[4];

	private int pendingContent;

	/** Output token counts in the buffer in flight: choice (-1 = stream) and count. */
	private int[] tokenChoices = new int[2];

	private long[] tokenCounts = new long[2];

	private int pendingTokens;

	/**
	 * The engine's report from an event in the buffer in flight, until that buffer is
	 * written.
	 */
	private EngineReport pendingReport;

	/**
	 * Whether the stream's engine report was taken: only the first counts, so one is
	 * built.
	 */
	private boolean engineReportTaken;

	private boolean sawEnd;

	private boolean sawFailure;

	/**
	 * Socket wait of the writes since the last content event (bytes of no content event).
	 */
	private long earlierWaitNanos;

	private long lastWriteNanos = -1;

	private boolean writing;

	private boolean done;

	private boolean sendCheckArmed;

	private long sendProgressNanos;

	private long sendPendingBytes;

	private volatile boolean cancelled;

	private volatile boolean upstreamEnded;

	private volatile Throwable upstreamError;

	private ResponseRelay(Publisher<ByteBuf> body, boolean chunkedToClient, Channel client, ExchangeRecorder recorder,
			boolean timed, NanoClock clock, long sendTimeoutNanos, Runnable sendTimedOut, Runnable onDone) {
		this.client = client;
		Writers writers = Writers.of(client);
		ChannelHandlerContext framedWriter = chunkedToClient ? writers.framed() : null;
		this.framed = (framedWriter != null && body instanceof EngineExchange exchange && exchange.passFraming())
				? exchange : null;
		this.out = (this.framed != null) ? framedWriter : writers.body();
		this.recorder = recorder;
		this.scanner = timed ? new SseEventScanner() : null;
		this.clock = clock;
		this.sendTimeoutNanos = sendTimeoutNanos;
		this.sendTimedOut = sendTimedOut;
		this.onDone = onDone;
		this.writeFailures = ClientWriteFailures.of(client.pipeline());
	}

	/**
	 * Relays {@code body} to {@code client}; the returned Mono completes when the relay
	 * has said its verdict. Cancelling it (the client went away) cancels the upstream
	 * body, which closes the upstream connection so the engine aborts the request.
	 * @param body the upstream response body
	 * @param chunkedToClient whether the response head sent to the client announced a
	 * chunked body (then an engine exchange's chunked body passes through framed as it
	 * is, where the client pipeline allows)
	 * @param client the client connection
	 * @param recorder the exchange's recorder
	 * @param timed whether to scan and time SSE events (a live stream)
	 * @param clock the clock events are timed with
	 * @param sendTimeoutNanos how long the client's socket may accept nothing
	 * @param sendTimedOut told (on the client loop) when a client is closed for that
	 * @return completes with the relay
	 */
	static Mono<Void> relay(Publisher<ByteBuf> body, boolean chunkedToClient, Channel client, ExchangeRecorder recorder,
			boolean timed, NanoClock clock, long sendTimeoutNanos, Runnable sendTimedOut) {
		return Mono.create((sink) -> {
			ResponseRelay relay = new ResponseRelay(body, chunkedToClient, client, recorder, timed, clock,
					sendTimeoutNanos, sendTimedOut, sink::success);
			sink.onCancel(relay::clientGone);
			relay.start(body);
		});
	}

	/**
	 * Relays {@code body} to {@code client}, as {@link #relay} does, without a Mono:
	 * {@code onDone} is told once, on the client loop, when the relay has said its
	 * verdict, which may be before this returns. {@link #clientGone()} ends it early.
	 * @param body the upstream response body
	 * @param chunkedToClient as for {@link #relay}
	 * @param client the client connection
	 * @param recorder the exchange's recorder
	 * @param timed whether to scan and time SSE events (a live stream)
	 * @param clock the clock events are timed with
	 * @param sendTimeoutNanos how long the client's socket may accept nothing
	 * @param sendTimedOut told (on the client loop) when a client is closed for that
	 * @param onDone told when the relay is over
	 * @return the relay
	 */
	static ResponseRelay start(Publisher<ByteBuf> body, boolean chunkedToClient, Channel client,
			ExchangeRecorder recorder, boolean timed, NanoClock clock, long sendTimeoutNanos, Runnable sendTimedOut,
			Runnable onDone) {
		ResponseRelay relay = new ResponseRelay(body, chunkedToClient, client, recorder, timed, clock, sendTimeoutNanos,
				sendTimedOut, onDone);
		relay.start(body);
		return relay;
	}

	private void start(Publisher<ByteBuf> body) {
		body.subscribe(this);
		if (!this.done) {
			this.client.closeFuture().addListener(this);
		}
	}

	/**
	 * Where a client connection's relays write body bytes, worked out at its first relay
	 * and kept on the connection: walking the pipeline's handlers cost each request a
	 * list of their names and a lookup of each. The handlers that see writes are those
	 * installed when the connection is set up (Reactor Netty's, tokengap's, a
	 * customizer's {@code doOnConnection}); nothing on the proxy port adds one per
	 * request.
	 *
	 * @param body the invoker body bytes are written from
	 * @param framed the context a chunked body framed by the engine is written from, or
	 * null where the pipeline does not allow it
	 */
	record Writers(ChannelOutboundInvoker body, ChannelHandlerContext framed) {

		private static final AttributeKey<Writers> KEY = AttributeKey.valueOf("tokengap.relayWriters");

		static Writers of(Channel client) {
			Attribute<Writers> attribute = client.attr(KEY);
			Writers writers = attribute.get();
			if (writers == null) {
				writers = new Writers(bodyWriter(client), framedWriter(client));
				attribute.set(writers);
			}
			return writers;
		}

	}

	/**
	 * The context body bytes are written from. On the proxy port the handlers between the
	 * HTTP codec and the pipeline's tail are tokengap's own that watch a request's
	 * arrival and a response's head and end, and Reactor Netty's traffic handler, none of
	 * which touches a body buffer; writing it from the handler right after the codec,
	 * {@link RequestTimeoutHandler} as the proxy port installs it, spares that walk for
	 * every event. The response's head and end still go the whole way. When any other
	 * handler that sees writes sits there (Reactor Netty's compression, access log or
	 * metrics, a customizer's own), it must see the body too: the channel itself is
	 * written then, as it is in a pipeline of some other shape.
	 */
	private static ChannelOutboundInvoker bodyWriter(Channel client) {
		ChannelPipeline pipeline = client.pipeline();
		ChannelHandlerContext afterCodec = pipeline.context(RequestTimeoutHandler.class);
		if (afterCodec == null) {
			return client;
		}
		return leaveBodiesAloneAfter(pipeline, afterCodec.name()) ? afterCodec : client;
	}

	/**
	 * The context a chunked body framed by the engine is written from: the server's HTTP
	 * codec, so that its encoder, which would frame each buffer again, is passed by. Only
	 * where every handler after the codec that sees writes is one of those that leave
	 * body bytes alone (as {@link #bodyWriter} requires); the response's head and end
	 * still go through the encoder, which writes the client's last chunk.
	 */
	private static ChannelHandlerContext framedWriter(Channel client) {
		ChannelPipeline pipeline = client.pipeline();
		ChannelHandlerContext codec = pipeline.context(NettyPipeline.HttpCodec);
		if (codec == null || !(codec.handler() instanceof HttpServerCodec)) {
			return null;
		}
		return leaveBodiesAloneAfter(pipeline, NettyPipeline.HttpCodec) ? codec : null;
	}

	/**
	 * Whether every handler after the named one that sees writes only watches a
	 * response's head and end.
	 */
	private static boolean leaveBodiesAloneAfter(ChannelPipeline pipeline, String after) {
		List<String> names = pipeline.names();
		for (int i = names.indexOf(after) + 1; i < names.size(); i++) {
			String name = names.get(i);
			ChannelHandler handler = pipeline.get(name);
			if (handler instanceof ChannelOutboundHandler && !(handler instanceof ResponseHeadFlush)
					&& !(handler instanceof RequestTimeoutHandler) && !NettyPipeline.HttpTrafficHandler.equals(name)) {
				return false;
			}
		}
		return true;
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
		this.event.setArrivalNanos(this.clock.nanoTime());
		if (this.scanner != null) {
			scan(buf);
		}
		this.writing = true;
		// The upstream receiver releases buf when onNext returns; the write owns this
		// retain.
		this.inFlight = buf.retain();
		onClientLoop(this);
	}

	private void scan(ByteBuf buf) {
		EngineExchange exchange = this.framed;
		if (exchange == null) {
			buf.forEachByte(this);
			return;
		}
		// only chunk data is the event stream; size lines and CRLFs are framing
		int ranges = exchange.dataRanges();
		for (int i = 0; i < ranges; i++) {
			int start = exchange.dataStart(i);
			buf.forEachByte(start, exchange.dataEnd(i) - start, this);
		}
	}

	/**
	 * Writes the buffer in flight, on the client loop. Run as this object itself (one
	 * buffer is in flight at a time), so a write allocates no task; the time it starts
	 * separates a busy event loop (before) from a full client socket (after).
	 */
	@Override
	public void run() {
		ByteBuf buf = this.inFlight;
		this.inFlight = null;
		if (this.done) {
			buf.release();
			return;
		}
		this.event.setWriteStartNanos(this.clock.nanoTime());
		// Usually the socket takes the whole buffer inside this call. A void promise
		// spares a
		// promise and a listener call per event (and the encoder's promise combiner);
		// whether the
		// write completed is read from the outbound buffer afterwards. A failed write
		// fires
		// exceptionCaught inside this call: an I/O failure also closes the channel (the
		// stream
		// ends through closeFuture); any other ends it here, so no event that never
		// reached the
		// client is timed.
		this.out.writeAndFlush(buf, this.client.voidPromise());
		Throwable failure = this.writeFailures.take();
		if (!this.client.isActive()) {
			return;
		}
		if (failure != null) {
			this.writing = false;
			finish(StreamOutcome.UPSTREAM_ERROR);
			return;
		}
		if (nothingPending()) {
			written();
		}
		else {
			// The client's socket is full (or earlier bytes were still queued): completes
			// once
			// everything before it has been written.
			this.out.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(this);
			armSendCheck();
		}
	}

	private boolean nothingPending() {
		ChannelOutboundBuffer outbound = this.client.unsafe().outboundBuffer();
		return outbound != null && outbound.totalPendingWriteBytes() == 0;
	}

	private long pendingBytes() {
		ChannelOutboundBuffer outbound = this.client.unsafe().outboundBuffer();
		return (outbound != null) ? outbound.totalPendingWriteBytes() : 0;
	}

	/**
	 * Watches a write that waits for the client's socket: as long as the socket accepts
	 * some bytes now and then the client is only slow; once it has accepted none for the
	 * send timeout, the client is closed and the engine request cancelled (nginx's
	 * {@code send_timeout}). Checked a few times per timeout; costs nothing while the
	 * socket keeps up.
	 */
	private void armSendCheck() {
		this.sendProgressNanos = this.clock.nanoTime();
		this.sendPendingBytes = pendingBytes();
		if (!this.sendCheckArmed) {
			this.sendCheckArmed = true;
			scheduleSendCheck(this.sendTimeoutNanos);
		}
	}

	private void scheduleSendCheck(long delayNanos) {
		long interval = Math.max(delayNanos, 1_000_000L);
		try {
			this.client.eventLoop().schedule(this.sendCheck, interval, TimeUnit.NANOSECONDS);
		}
		catch (RejectedExecutionException ex) {
			this.sendCheckArmed = false;
		}
	}

	private void checkSend() {
		if (!this.writing || this.done) {
			this.sendCheckArmed = false;
			return;
		}
		long now = this.clock.nanoTime();
		long pending = pendingBytes();
		if (pending != this.sendPendingBytes) {
			this.sendPendingBytes = pending;
			this.sendProgressNanos = now;
		}
		long silent = now - this.sendProgressNanos;
		if (silent >= this.sendTimeoutNanos) {
			this.sendCheckArmed = false;
			this.writing = false;
			this.sendTimedOut.run();
			finish(StreamOutcome.CLIENT_CANCELLED);
			this.client.close();
			return;
		}
		scheduleSendCheck(Math.min(this.sendTimeoutNanos - silent, Math.max(this.sendTimeoutNanos / 4, 1)));
	}

	@Override
	public boolean process(byte value) {
		SseEventKind kind = this.scanner.accept(value);
		if (kind == null) {
			return true;
		}
		switch (kind) {
			case CONTENT -> pendContent(this.scanner.contentChoices());
			case DONE -> this.sawEnd = true;
			case ERROR -> this.sawFailure = true;
			default -> {
				// not timed
			}
		}
		long tokens = this.scanner.outputTokens();
		if (tokens >= 0) {
			pendTokens(this.scanner.tokensChoice(), tokens);
		}
		if (this.scanner.engineMetrics() && !this.engineReportTaken) {
			pendReport();
		}
		return true;
	}

	/**
	 * The stream's one allocation for its engine report, read before the next event
	 * overwrites it.
	 */
	private void pendReport() {
		this.engineReportTaken = true;
		this.pendingReport = new EngineReport(this.scanner.engineQueueMs(), this.scanner.engineFirstTokenMs(),
				this.scanner.engineGenerationMs(), this.scanner.engineMeanItlMs(), this.scanner.enginePreemptions());
	}

	private void pendContent(long choices) {
		long remaining = choices;
		while (remaining != 0) {
			int choice = Long.numberOfTrailingZeros(remaining);
			remaining &= remaining - 1;
			if (this.pendingContent == this.pendingChoices.length) {
				this.pendingChoices = Arrays.copyOf(this.pendingChoices, 2 * this.pendingContent);
			}
			this.pendingChoices[this.pendingContent++] = choice;
		}
	}

	private void pendTokens(int choice, long tokens) {
		if (this.pendingTokens == this.tokenChoices.length) {
			this.tokenChoices = Arrays.copyOf(this.tokenChoices, 2 * this.pendingTokens);
			this.tokenCounts = Arrays.copyOf(this.tokenCounts, 2 * this.pendingTokens);
		}
		this.tokenChoices[this.pendingTokens] = choice;
		this.tokenCounts[this.pendingTokens++] = tokens;
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
		if (this.done) {
			return;
		}
		this.lastWriteNanos = writeNanos;
		this.recorder.bodyWritten(writeNanos);
		if (this.pendingContent == 0) {
			this.earlierWaitNanos += writeNanos - this.event.writeStartNanos();
		}
		this.event.setWriteNanos(writeNanos);
		for (int i = 0; i < this.pendingContent; i++) {
			this.event.setEarlierWaitNanos(this.earlierWaitNanos);
			this.recorder.contentWritten(this.pendingChoices[i], this.event);
			this.earlierWaitNanos = 0;
		}
		for (int i = 0; i < this.pendingTokens; i++) {
			this.recorder.outputTokens(this.tokenChoices[i], this.tokenCounts[i]);
		}
		if (this.pendingReport != null) {
			this.recorder.engineReported(this.pendingReport);
			this.pendingReport = null;
		}
		this.pendingContent = 0;
		this.pendingTokens = 0;
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
			long end = (this.lastWriteNanos >= 0) ? this.lastWriteNanos : this.clock.nanoTime();
			this.recorder.completed(end);
			finish(StreamOutcome.ofBody(this.sawFailure, this.sawEnd, this.recorder.timer().contentEvents()));
		}
		else {
			finish((error instanceof ReadTimeoutException) ? StreamOutcome.UPSTREAM_TIMEOUT
					: StreamOutcome.UPSTREAM_ERROR);
		}
	}

	/** The client went away: the relay ends, and the engine request with it. */
	void clientGone() {
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
		this.recorder.outcome(outcome);
		if (outcome == StreamOutcome.UPSTREAM_ERROR || outcome == StreamOutcome.UPSTREAM_TIMEOUT) {
			// The response is committed: closing without the terminating chunk is how
			// HTTP/1.1
			// tells the client that the body is incomplete.
			this.client.close();
		}
		this.onDone.run();
	}

	private void onClientLoop(Runnable action) {
		OnLoop.run(this.client.eventLoop(), action);
	}

}
