package dev.tokengap.proxy;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.util.AsciiString;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;
import reactor.core.scheduler.Schedulers;
import reactor.netty.Connection;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

import dev.tokengap.metrics.Endpoint;
import dev.tokengap.metrics.ExchangeRecorder;
import dev.tokengap.metrics.ModelLabels;
import dev.tokengap.metrics.StreamOutcome;

/**
 * One client request on its way through tokengap: read the body (bounded), learn the
 * model, forward, relay the response, and map failures before commit to OpenAI-style
 * errors.
 */
final class ProxyExchange {

	private static final Log logger = LogFactory.getLog(ProxyExchange.class);

	/** Response headers tokengap sets itself. */
	private static final HopByHopHeaders OWN_HEADERS = HopByHopHeaders.andAlso("x-request-id");

	/** The request id's header, as Netty's own name type: its hash is computed once. */
	static final AsciiString X_REQUEST_ID = AsciiString.cached("x-request-id");

	private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);

	/** Bodies this long or longer are scanned for their facts off the event loop. */
	static final int OFF_LOOP_BODY_BYTES = 256 * 1024;

	private final ProxyHandler handler;

	private final HttpServerRequest in;

	private final HttpServerResponse out;

	private final Channel channel;

	private final ExchangeRecorder recorder;

	private final String requestId;

	private final Endpoint endpoint;

	ProxyExchange(ProxyHandler handler, HttpServerRequest in, HttpServerResponse out, long startNanos) {
		this.handler = handler;
		this.in = in;
		this.out = out;
		this.channel = ((Connection) out).channel();
		this.recorder = new ExchangeRecorder(handler.meters(), startNanos);
		this.requestId = requestId(in.requestHeaders());
		this.endpoint = Endpoint.of(RequestPath.of(in.uri()));
		this.recorder.route(ModelLabels.UNKNOWN, this.endpoint);
	}

	/**
	 * Runs the exchange. Its single exit records the outcome, whatever ended it:
	 * completion, an error, or the client's cancel.
	 */
	Mono<Void> run() {
		return Mono.defer(this::exchange).doFinally(this::close);
	}

	private Mono<Void> exchange() {
		if (!this.in.uri().startsWith("/")) {
			return fail(new InvalidRequestTargetException());
		}
		long limit = this.handler.properties().maxRequestBody().toBytes();
		long declared = contentLength(this.in.requestHeaders());
		if (declared > limit) {
			return fail(new RequestBodyTooLargeException(limit));
		}
		return readBody(limit).flatMap(this::forward).onErrorResume(this::fail);
	}

	private void close(SignalType signal) {
		this.recorder.close(this.handler.clock().nanoTime(), signal == SignalType.CANCEL);
	}

	private Mono<ByteBuf> readBody(long limit) {
		return new RequestBody(this.in.receiveObject(), this.channel, limit);
	}

	private Mono<Void> forward(ByteBuf body) {
		if (body.readableBytes() < OFF_LOOP_BODY_BYTES) {
			RequestFacts facts;
			try {
				facts = RequestFacts.of(body, contentType());
			}
			catch (RuntimeException ex) {
				// forward owns the body from the hand-over on
				body.release();
				return Mono.error(ex);
			}
			return send(body, facts);
		}
		// A long context: its scan would hold up every stream on this event loop for
		// milliseconds.
		// The scan holds a reference of its own, so a cancel while it runs frees nothing
		// under it;
		// the exchange's reference goes to send, or is released here if the scan never
		// got there.
		body.retain();
		AtomicBoolean scanClaimed = new AtomicBoolean();
		AtomicBoolean sent = new AtomicBoolean();
		return Mono.fromCallable(() -> scan(body, scanClaimed))
			.subscribeOn(Schedulers.boundedElastic())
			.flatMap((facts) -> {
				sent.set(true);
				return send(body, facts);
			})
			.doFinally((signal) -> {
				if (scanClaimed.compareAndSet(false, true)) {
					body.release();
				}
				if (!sent.get()) {
					body.release();
				}
			});
	}

	private RequestFacts scan(ByteBuf body, AtomicBoolean claimed) {
		if (!claimed.compareAndSet(false, true)) {
			return RequestFacts.NONE;
		}
		try {
			return RequestFacts.of(body, contentType());
		}
		finally {
			body.release();
		}
	}

	private String contentType() {
		return this.in.requestHeaders().get(HttpHeaderNames.CONTENT_TYPE);
	}

	private Mono<Void> send(ByteBuf body, RequestFacts facts) {
		Mono<Void> exchange;
		try {
			if (facts.stream()) {
				this.recorder.streamRequested();
			}
			this.recorder.route(this.handler.labels().resolve(facts.model()), this.endpoint);
			// About four bytes of request per prompt token: only used to weigh other
			// streams' prefills.
			this.recorder.identify(this.requestId, body.readableBytes() / 4);
			exchange = this.handler.upstream()
				.exchange(this.in, this.channel.eventLoop(), body, this.requestId, this::respond);
		}
		catch (RuntimeException ex) {
			// send owns the body, also when it fails before the doFinally below is
			// attached
			body.release();
			return Mono.error(ex);
		}
		return exchange.doFinally((signal) -> body.release());
	}

	private Mono<Void> respond(HttpResponse response, Publisher<ByteBuf> body) {
		int status = response.status().code();
		this.out.status(response.status());
		HttpHeaders headers = this.out.responseHeaders();
		OWN_HEADERS.copy(response.headers(), headers);
		headers.set(X_REQUEST_ID, this.requestId);
		this.recorder.responded(status);
		StreamOutcome refused = StreamOutcome.ofEngineStatus(status);
		if (refused != null) {
			this.recorder.outcome(refused);
		}
		// Only a generation is a live stream: a stored response replayed as events
		// (GET /v1/responses/{id}?stream=true) is forwarded, not timed.
		boolean live = isEventStream(response.headers().get(HttpHeaderNames.CONTENT_TYPE))
				&& HttpMethod.POST.equals(this.in.method());
		if (live) {
			this.recorder.streamStarted();
		}
		// Headers go out now, before the first event, as the engine sent them.
		this.out.then().subscribe(null, (ex) -> {
		});
		String encoding = this.out.responseHeaders().get(HttpHeaderNames.TRANSFER_ENCODING);
		boolean chunked = encoding != null && HttpHeaderValues.CHUNKED.contentEqualsIgnoreCase(encoding);
		return ResponseRelay.relay(body, chunked, this.channel, this.recorder, live, this.handler.clock(),
				this.handler.properties().sendTimeout().toNanos(), this::sendTimedOut);
	}

	private void sendTimedOut() {
		long skipped = this.handler.errorLog().tryAcquire();
		if (skipped >= 0) {
			logger.warn("Request " + this.requestId + " (" + this.endpoint.label()
					+ "): the client accepted no bytes for " + this.handler.properties().sendTimeout()
					+ " (tokengap.proxy.send-timeout); closed it and cancelled the engine request" + skipped(skipped));
		}
	}

	private Mono<Void> fail(Throwable error) {
		if (error instanceof RequestBodyDecodingException) {
			// Reactor Netty has made its 400 this exchange's response and closes the
			// connection.
			this.recorder.responded(400);
			this.recorder.outcome(StreamOutcome.INVALID);
			return Mono.empty();
		}
		if (this.out.hasSentHeaders()) {
			// Committed: the relay, if it ran, has said its verdict; end the connection
			// as a failure.
			this.recorder.outcome((error instanceof UpstreamTimeoutException) ? StreamOutcome.UPSTREAM_TIMEOUT
					: StreamOutcome.UPSTREAM_ERROR);
			this.channel.close();
			return Mono.empty();
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
		return ErrorResponses.send(this.out, answer.status(), answer.type(), error.getMessage()).doOnSuccess((v) -> {
			long now = this.handler.clock().nanoTime();
			this.recorder.bodyWritten(now);
			this.recorder.completed(now);
		}).onErrorResume((ex) -> Mono.empty());
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
