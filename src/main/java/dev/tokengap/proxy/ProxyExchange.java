package dev.tokengap.proxy;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.util.AsciiString;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Schedulers;
import reactor.netty.Connection;
import reactor.netty.channel.AbortedException;
import reactor.netty.http.client.HttpClientResponse;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.util.context.Context;

import dev.tokengap.metrics.Endpoint;
import dev.tokengap.metrics.ExchangeRecorder;
import dev.tokengap.metrics.ModelLabels;
import dev.tokengap.metrics.RequestTrace;
import dev.tokengap.metrics.RequestTracer;
import dev.tokengap.metrics.StreamOutcome;
import dev.tokengap.metrics.StreamTap;
import dev.tokengap.metrics.TraceParent;

/**
 * One client request on its way through tokengap: read the body (bounded), learn the
 * model, forward, relay the response, and map failures before commit to OpenAI-style
 * errors.
 * <p>
 * The exchange is the Mono the proxy port's server subscribes to, and one object runs it
 * from start to end: it subscribes to the body, is told of the engine's response head and
 * of the relay's end, and is its subscriber's subscription. A chain of Reactor operators
 * did this before, about ten subscribers and subscriptions made and wired per request.
 * Every step runs on the client connection's event loop (a cancel from elsewhere, and the
 * end of a long body's scan off the loop, hop onto it), so the state needs no
 * synchronisation. Its single exit records the outcome, whatever ended the exchange:
 * completion, an error, or the client's cancel.
 */
final class ProxyExchange extends Mono<Void>
		implements Subscription, CoreSubscriber<ByteBuf>, EngineCall.Listener, Runnable {

	private static final Log logger = LogFactory.getLog(ProxyExchange.class);

	/** Response headers tokengap sets itself. */
	private static final HopByHopHeaders OWN_HEADERS = HopByHopHeaders.andAlso("x-request-id");

	/** The request id's header, as Netty's own name type: its hash is computed once. */
	static final AsciiString X_REQUEST_ID = AsciiString.cached("x-request-id");

	private static final AsciiString TRACEPARENT = AsciiString.cached(TraceParent.HEADER);

	private static final AsciiString TRACESTATE = AsciiString.cached(TraceParent.STATE_HEADER);

	private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);

	/** Bodies this long or longer are scanned for their facts off the event loop. */
	static final int OFF_LOOP_BODY_BYTES = 256 * 1024;

	/** Before the subscriber came. */
	private static final int NEW = 0;

	/** Reading the body ({@link #body}). */
	private static final int READING = 1;

	/** Scanning a long body off the loop ({@link #scan}). */
	private static final int SCANNING = 2;

	/** Waiting for the engine's response head ({@link #engine}). */
	private static final int EXCHANGING = 3;

	/** Relaying the response body ({@link #relay}). */
	private static final int RELAYING = 4;

	/** Sending tokengap's own error answer ({@link #answer}). */
	private static final int ANSWERING = 5;

	/** Over: the subscriber was told, or cancelled, and the outcome recorded. */
	private static final int DONE = 6;

	private final ProxyHandler handler;

	private final HttpServerRequest in;

	private final HttpServerResponse out;

	private final Channel channel;

	private final ExchangeRecorder recorder;

	private final String requestId;

	private final RequestTrace trace;

	private final Endpoint endpoint;

	private CoreSubscriber<? super Void> actual;

	private int stage = NEW;

	/** The body's read, while {@link #READING}. */
	private Subscription body;

	/** The scan off the loop, while {@link #SCANNING}. */
	private Disposable scan;

	/** The body a scan off the loop holds (the exchange's reference), while it runs. */
	private ByteBuf scanned;

	/**
	 * Whether the scan's own reference of {@link #scanned} was taken, by it or by a
	 * cancel.
	 */
	private AtomicBoolean scanClaimed;

	/** The engine exchange, from {@link #EXCHANGING} on. */
	private EngineCall engine;

	/** The relay, while {@link #RELAYING}. */
	private ResponseRelay relay;

	/** The error answer's send, while {@link #ANSWERING}. */
	private Disposable answer;

	ProxyExchange(ProxyHandler handler, HttpServerRequest in, HttpServerResponse out, long startNanos) {
		this.handler = handler;
		this.in = in;
		this.out = out;
		this.channel = ((Connection) out).channel();
		this.recorder = new ExchangeRecorder(handler.meters(), startNanos);
		this.requestId = requestId(in.requestHeaders());
		this.trace = trace(handler.tracer(), in.requestHeaders());
		this.recorder.trace(this.trace);
		this.endpoint = Endpoint.of(RequestPath.of(in.uri()));
		this.recorder.route(ModelLabels.UNKNOWN, this.endpoint);
	}

	/**
	 * Runs the exchange for its one subscriber (the server's), which is told of its
	 * completion once the outcome is known; it never errors: a failure is answered or
	 * ends the connection.
	 */
	@Override
	public void subscribe(CoreSubscriber<? super Void> actual) {
		if (this.actual != null) {
			Operators.error(actual, new IllegalStateException("a proxy exchange runs once"));
			return;
		}
		this.actual = actual;
		actual.onSubscribe(this);
		if (this.channel.eventLoop().inEventLoop()) {
			start();
		}
		else {
			onLoop(this::start);
		}
	}

	@Override
	public Context currentContext() {
		return this.actual.currentContext();
	}

	@Override
	public void request(long n) {
		// nothing to emit: the subscriber waits for the completion only
	}

	/** The subscriber cancelled: the client went away, or the server is closing. */
	@Override
	public void cancel() {
		if (this.channel.eventLoop().inEventLoop()) {
			cancelled();
		}
		else {
			onLoop(this::cancelled);
		}
	}

	private void start() {
		if (this.stage != NEW) {
			return;
		}
		try {
			if (!this.in.uri().startsWith("/")) {
				fail(new InvalidRequestTargetException());
				return;
			}
			long limit = this.handler.properties().maxRequestBody().toBytes();
			long declared = contentLength(this.in.requestHeaders());
			if (declared > limit) {
				fail(new RequestBodyTooLargeException(limit));
				return;
			}
			this.stage = READING;
			new RequestBody(this.in.receiveObject(), this.channel, limit).subscribe(this);
		}
		catch (RuntimeException ex) {
			fail(ex);
		}
	}

	// The body's read: one buffer, then completion; or an error.

	@Override
	public void onSubscribe(Subscription s) {
		if (this.stage != READING) {
			s.cancel();
			return;
		}
		this.body = s;
		s.request(1);
	}

	@Override
	public void onNext(ByteBuf read) {
		if (this.stage != READING) {
			read.release();
			return;
		}
		this.body = null;
		forward(read);
	}

	@Override
	public void onError(Throwable error) {
		if (this.stage == READING) {
			this.body = null;
			fail(error);
		}
	}

	@Override
	public void onComplete() {
		if (this.stage == READING) {
			// the read emits its body before it completes
			this.body = null;
			fail(new IllegalStateException("the request body's read ended without the body"));
		}
	}

	private void forward(ByteBuf read) {
		if (read.readableBytes() < OFF_LOOP_BODY_BYTES) {
			RequestFacts facts;
			try {
				facts = RequestFacts.of(read, contentType());
			}
			catch (RuntimeException ex) {
				// forward owns the body from the hand-over on
				read.release();
				fail(ex);
				return;
			}
			send(read, facts);
			return;
		}
		// A long context: its scan would hold up every stream on this event loop for
		// milliseconds. The scan holds a reference of its own, so a cancel while it runs
		// frees nothing under it; the exchange's reference goes to send, or is released
		// by a cancel.
		this.stage = SCANNING;
		this.scanned = read;
		this.scanClaimed = new AtomicBoolean();
		read.retain();
		AtomicBoolean claimed = this.scanClaimed;
		this.scan = Mono.fromCallable(() -> scan(read, claimed))
			.subscribeOn(Schedulers.boundedElastic())
			.subscribe((facts) -> onLoop(() -> scanned(facts)), (ex) -> onLoop(() -> scanFailed(ex)));
	}

	private RequestFacts scan(ByteBuf read, AtomicBoolean claimed) {
		if (!claimed.compareAndSet(false, true)) {
			return RequestFacts.NONE;
		}
		try {
			return RequestFacts.of(read, contentType());
		}
		finally {
			read.release();
		}
	}

	private void scanned(RequestFacts facts) {
		if (this.stage != SCANNING) {
			return;
		}
		ByteBuf read = takeScanned();
		send(read, facts);
	}

	private void scanFailed(Throwable error) {
		if (this.stage != SCANNING) {
			return;
		}
		takeScanned().release();
		fail(error);
	}

	private ByteBuf takeScanned() {
		ByteBuf read = this.scanned;
		this.scanned = null;
		this.scan = null;
		return read;
	}

	private String contentType() {
		return this.in.requestHeaders().get(HttpHeaderNames.CONTENT_TYPE);
	}

	private void send(ByteBuf read, RequestFacts facts) {
		try {
			if (facts.stream()) {
				this.recorder.streamRequested();
			}
			this.recorder.route(this.handler.labels().resolve(facts.model()), this.endpoint);
			// About four bytes of request per prompt token: only used to weigh other
			// streams' prefills.
			this.recorder.identify(this.requestId, read.readableBytes() / 4);
			this.engine = new EngineCall(this.handler.upstream().exchange(this.in, read, this.requestId, this.trace),
					this.channel.eventLoop(), this);
		}
		catch (RuntimeException ex) {
			fail(ex);
			return;
		}
		finally {
			// the engine exchange keeps a reference of its own
			read.release();
		}
		this.stage = EXCHANGING;
		this.engine.start();
	}

	// The engine exchange: its response head, or its failure before it.

	@Override
	public void responded(EngineCall call) {
		if (this.stage != EXCHANGING) {
			return;
		}
		this.stage = RELAYING;
		try {
			respond(call);
		}
		catch (RuntimeException ex) {
			this.relay = null;
			call.abandon();
			if (this.stage == RELAYING) {
				fail(ex);
			}
		}
	}

	@Override
	public void failedBeforeResponse(Throwable cause) {
		if (this.stage == EXCHANGING) {
			fail(cause);
		}
	}

	private void respond(EngineCall call) {
		HttpClientResponse response = call.response();
		int status = response.status().code();
		this.out.status(response.status());
		HttpHeaders headers = this.out.responseHeaders();
		OWN_HEADERS.copy(response.responseHeaders(), headers);
		headers.set(X_REQUEST_ID, this.requestId);
		this.recorder.responded(status);
		StreamOutcome refused = StreamOutcome.ofEngineStatus(status);
		if (refused != null) {
			this.recorder.outcome(refused);
		}
		// Only a generation is a live stream: a stored response replayed as events
		// (GET /v1/responses/{id}?stream=true) is forwarded, not timed.
		boolean live = isEventStream(response.responseHeaders().get(HttpHeaderNames.CONTENT_TYPE))
				&& HttpMethod.POST.equals(this.in.method());
		if (live) {
			this.recorder.streamStarted();
		}
		// Headers go out now, before the first event, as the engine sent them.
		this.out.sendHeaders().then().subscribe(null, (ex) -> {
		});
		ProxyProperties properties = this.handler.properties();
		ResponseRelay.Timeouts timeouts = new ResponseRelay.Timeouts(properties.sendTimeout().toNanos(),
				this::sendTimedOut, this.handler.upstream().idleTimeout().toNanos());
		ResponseRelay started = ResponseRelay.start(call.body(), this.channel, new StreamTap(this.recorder, live),
				this.handler.clock(), timeouts, this);
		if (this.stage == RELAYING) {
			this.relay = started;
		}
	}

	/** The relay said its verdict: the exchange is over. On the loop. */
	@Override
	public void run() {
		if (this.stage != RELAYING) {
			return;
		}
		this.relay = null;
		this.engine.abandon();
		end(false);
	}

	private void sendTimedOut() {
		long skipped = this.handler.errorLog().tryAcquire();
		if (skipped >= 0) {
			logger.warn("Request " + this.requestId + " (" + this.endpoint.label()
					+ "): the client accepted no bytes for " + this.handler.properties().sendTimeout()
					+ " (tokengap.proxy.send-timeout); closed it and cancelled the engine request" + skipped(skipped));
		}
	}

	private void fail(Throwable error) {
		if (error instanceof RequestBodyDecodingException) {
			// Reactor Netty has made its 400 this exchange's response and closes the
			// connection.
			this.recorder.responded(400);
			this.recorder.outcome(StreamOutcome.INVALID);
			end(false);
			return;
		}
		if (!this.channel.isActive() || error instanceof AbortedException) {
			// The client went away (before its body was whole, say): there is no one to
			// answer, and nothing unexpected happened. Counted as the client's close.
			end(true);
			return;
		}
		if (this.out.hasSentHeaders()) {
			// Committed: the relay, if it ran, has said its verdict; end the connection
			// as a failure.
			this.recorder.outcome((error instanceof UpstreamTimeoutException) ? StreamOutcome.UPSTREAM_TIMEOUT
					: StreamOutcome.UPSTREAM_ERROR);
			// over before the close, whose cancel (if the server sends one) then finds
			// nothing to stop
			this.stage = DONE;
			this.channel.close();
			end(false);
			return;
		}
		ErrorAnswer answer = ErrorAnswer.of(error);
		if (answer.status() == 500) {
			logger.error("Unexpected failure proxying request " + this.requestId, error);
		}
		else {
			logAnswer(answer.status(), error);
		}
		this.recorder.responded(answer.status());
		this.recorder.outcome(StreamOutcome.ofProxyAnswer(answer.status()));
		this.out.header(X_REQUEST_ID, this.requestId);
		this.stage = ANSWERING;
		Disposable sending;
		try {
			sending = ErrorResponses.send(this.out, answer.status(), answer.type(), error.getMessage())
				.subscribe(null, (ex) -> onLoop(this::answered), () -> onLoop(this::answerWritten));
		}
		catch (RuntimeException ex) {
			answered();
			return;
		}
		if (this.stage == ANSWERING) {
			this.answer = sending;
		}
	}

	private void answerWritten() {
		if (this.stage == ANSWERING) {
			long now = this.handler.clock().nanoTime();
			this.recorder.bodyWritten(now);
			this.recorder.completed(now);
			answered();
		}
	}

	private void answered() {
		if (this.stage == ANSWERING) {
			this.answer = null;
			end(false);
		}
	}

	/**
	 * Ends the exchange: over, its subscriber told, then its outcome recorded.
	 * @param clientGone whether it ended because the client went away
	 */
	private void end(boolean clientGone) {
		this.stage = DONE;
		this.actual.onComplete();
		this.recorder.close(this.handler.clock().nanoTime(), clientGone);
	}

	/** The subscriber cancelled: whatever step is running stops. On the loop. */
	private void cancelled() {
		int was = this.stage;
		if (was == DONE) {
			return;
		}
		this.stage = DONE;
		switch (was) {
			case READING -> {
				Subscription read = this.body;
				this.body = null;
				if (read != null) {
					read.cancel();
				}
			}
			case SCANNING -> {
				this.scan.dispose();
				if (this.scanClaimed.compareAndSet(false, true)) {
					// the scan never ran: its reference is released here
					this.scanned.release();
				}
				takeScanned().release();
			}
			case EXCHANGING -> this.engine.cancelBeforeResponse();
			case RELAYING -> {
				ResponseRelay running = this.relay;
				this.relay = null;
				if (running != null) {
					running.clientGone();
				}
				this.engine.abandon();
			}
			case ANSWERING -> {
				Disposable sending = this.answer;
				this.answer = null;
				if (sending != null) {
					sending.dispose();
				}
			}
			default -> {
				// not started
			}
		}
		this.recorder.close(this.handler.clock().nanoTime(), true);
	}

	private void onLoop(Runnable action) {
		OnLoop.run(this.channel.eventLoop(), action);
	}

	private void logAnswer(int status, Throwable error) {
		long skipped = this.handler.errorLog().tryAcquire();
		if (skipped >= 0) {
			logger.warn("Request " + this.requestId + " (" + this.endpoint.label() + ") answered " + status + ": "
					+ error.getMessage() + skipped(skipped));
		}
	}

	private String skipped(long skipped) {
		return (skipped > 0) ? " (" + skipped + " earlier error answers not logged: over "
				+ this.handler.errorLog().perSecond() + " lines/s; all are counted)" : "";
	}

	private static boolean isEventStream(String contentType) {
		return contentType != null && contentType.regionMatches(true, 0, "text/event-stream", 0, 17);
	}

	private static long contentLength(HttpHeaders headers) {
		String value = headers.get(HttpHeaderNames.CONTENT_LENGTH);
		if (value == null) {
			return -1;
		}
		try {
			return Long.parseLong(value.trim());
		}
		catch (NumberFormatException ex) {
			return -1;
		}
	}

	/**
	 * The request's trace, continuing the client's when its context is valid. Several
	 * {@code tracestate} lines are one list (W3C Trace Context, section 3.3.1.1).
	 */
	private static RequestTrace trace(RequestTracer tracer, HttpHeaders headers) {
		String parent = headers.get(TRACEPARENT);
		String state = null;
		if (parent != null && headers.contains(TRACESTATE)) {
			List<String> lines = headers.getAll(TRACESTATE);
			state = (lines.size() == 1) ? lines.get(0) : String.join(",", lines);
		}
		return tracer.start(parent, state);
	}

	private static String requestId(HttpHeaders headers) {
		String given = headers.get(X_REQUEST_ID);
		if (given != null && !given.isBlank() && given.length() <= 200) {
			return given;
		}
		return newRequestId();
	}

	/**
	 * A random id of 32 lower-case hex digits, each half with its top bit set (so never
	 * shorter), written in one array.
	 */
	static String newRequestId() {
		ThreadLocalRandom random = ThreadLocalRandom.current();
		byte[] id = new byte[32];
		hex(random.nextLong() | Long.MIN_VALUE, id, 0);
		hex(random.nextLong() | Long.MIN_VALUE, id, 16);
		return new String(id, StandardCharsets.ISO_8859_1);
	}

	private static void hex(long value, byte[] into, int at) {
		for (int i = 15; i >= 0; i--) {
			into[at + i] = HEX[(int) (value & 0xF)];
			value >>>= 4;
		}
	}

}
