package dev.tokengap.testsupport;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BiFunction;

import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponseStatus;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.Connection;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

/**
 * A real Reactor Netty server on loopback that plays a scripted response, recording what
 * it received and when it finished writing each step.
 */
public final class ScriptedUpstream implements AutoCloseable {

	private final DisposableServer server;

	private volatile BiFunction<HttpServerRequest, HttpServerResponse, Publisher<Void>> handler;

	private final List<Received> received = new CopyOnWriteArrayList<>();

	private final List<Long> sentNanos = new CopyOnWriteArrayList<>();

	private volatile java.util.Set<String> ignored = java.util.Set.of();

	private final java.util.Map<String, BiFunction<HttpServerRequest, HttpServerResponse, Publisher<Void>>> routes = new java.util.concurrent.ConcurrentHashMap<>();

	private ScriptedUpstream() {
		this.handler = (req, res) -> res.status(404).send();
		this.server = HttpServer.create()
			.host("127.0.0.1")
			.port(0)
			.handle((req, res) -> req.receive()
				.aggregate()
				.asString(StandardCharsets.UTF_8)
				.defaultIfEmpty("")
				.flatMap((body) -> {
					String path = path(req.uri());
					if (this.ignored.contains(path)) {
						return Mono.from(res.status(404).send());
					}
					this.received.add(new Received(req.method().name(), req.uri(), req.requestHeaders().copy(), body));
					return Mono.from(this.routes.getOrDefault(path, this.handler).apply(req, res));
				}))
			.bindNow();
	}

	/**
	 * The target's path, without query: read without {@link java.net.URI} (Reactor
	 * Netty's {@code fullPath()}), which refuses targets an engine answers, such as
	 * {@code /v1/{x}}.
	 */
	private static String path(String uri) {
		int query = uri.indexOf('?');
		return (query >= 0) ? uri.substring(0, query) : uri;
	}

	public static ScriptedUpstream start() {
		return new ScriptedUpstream();
	}

	/**
	 * Answers these paths 404 whatever the script, and leaves them out of
	 * {@link #received()}: for an upstream that tokengap scrapes while tests script their
	 * own answers.
	 * @param paths the paths to ignore
	 * @return this upstream
	 */
	public ScriptedUpstream ignoring(String... paths) {
		this.ignored = java.util.Set.of(paths);
		return this;
	}

	public String url() {
		return "http://127.0.0.1:" + this.server.port();
	}

	public int port() {
		return this.server.port();
	}

	/** Replaces the handler for the next requests, and drops every {@link #route}. */
	public void handle(BiFunction<HttpServerRequest, HttpServerResponse, Publisher<Void>> handler) {
		this.received.clear();
		this.sentNanos.clear();
		this.routes.clear();
		this.handler = handler;
	}

	/**
	 * Answers one path with its own script, whatever {@link #handle} scripts for the
	 * others: for a healthy stream running beside a fault, or an engine's
	 * {@code /metrics} changing mid-run.
	 * @param path the request path, without a query
	 * @param handler the script for that path
	 */
	public void route(String path, BiFunction<HttpServerRequest, HttpServerResponse, Publisher<Void>> handler) {
		this.routes.put(path, handler);
	}

	/** Answers every request with an event stream played step by step. */
	public void stream(List<Step> steps) {
		handle((req, res) -> play(res, steps, this.sentNanos::add));
	}

	/**
	 * Plays an event stream step by step on one response.
	 * @param res the response, headers not yet sent
	 * @param steps the steps
	 * @param sent told when each step's write completed (System.nanoTime)
	 * @return completes after the last step
	 */
	public static Mono<Void> play(HttpServerResponse res, List<Step> steps, java.util.function.LongConsumer sent) {
		res.status(HttpResponseStatus.OK).header(HttpHeaderNames.CONTENT_TYPE, "text/event-stream");
		return res.then()
			.thenMany(Flux.fromIterable(steps)
				.concatMap((step) -> Mono.delay(step.delay())
					.then(write(res, step.bytes()))
					.doOnSuccess((v) -> sent.accept(System.nanoTime()))))
			.then();
	}

	/**
	 * Writes and flushes bytes on the response's channel; completes when the write
	 * completed.
	 */
	public static Mono<Void> write(HttpServerResponse response, byte[] bytes) {
		return Mono.create((sink) -> ((Connection) response).channel()
			.writeAndFlush(Unpooled.wrappedBuffer(bytes))
			.addListener((future) -> {
				if (future.isSuccess()) {
					sink.success();
				}
				else {
					sink.error(future.cause());
				}
			}));
	}

	/**
	 * Writes the chunks one after another, each only once the previous write completed
	 * (reached the socket), so this upstream holds one chunk at a time and stalls when
	 * its peer stops reading: what a real engine's socket does.
	 * @param response the response, headers not yet sent
	 * @param chunks the body, produced lazily
	 * @param written counts the bytes whose write completed
	 * @return completes when the last write completed
	 */
	public static Mono<Void> writeAll(HttpServerResponse response, Flux<byte[]> chunks,
			java.util.concurrent.atomic.AtomicLong written) {
		return response.then()
			.thenMany(chunks
				.concatMap((bytes) -> write(response, bytes).doOnSuccess((v) -> written.addAndGet(bytes.length)), 1))
			.then();
	}

	/**
	 * Completes when the response's connection closes (the peer went away, or was cut
	 * off).
	 */
	public static java.util.concurrent.CompletableFuture<Void> closed(HttpServerResponse response) {
		java.util.concurrent.CompletableFuture<Void> closed = new java.util.concurrent.CompletableFuture<>();
		((Connection) response).channel().closeFuture().addListener((future) -> closed.complete(null));
		return closed;
	}

	/** A chat completion chunk event carrying {@code text} as its content. */
	public static String chatEvent(String text) {
		return "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + text + "\"}}]}\n\n";
	}

	/**
	 * Chat chunk events, 16 KB at a time, for {@link #writeAll}.
	 * @param total about how many bytes in all
	 */
	public static Flux<byte[]> chatEvents(long total) {
		String event = chatEvent("x".repeat(200));
		byte[] block = event.repeat(16 * 1024 / event.length()).getBytes(StandardCharsets.UTF_8);
		return Flux.range(0, (int) (total / block.length)).map((i) -> block);
	}

	/** Answers every request with a fixed status, content type and body. */
	public void respond(int status, String contentType, String body) {
		handle((req, res) -> res.status(status)
			.header(HttpHeaderNames.CONTENT_TYPE, contentType)
			.sendString(Mono.just(body))
			.then());
	}

	public List<Received> received() {
		return this.received;
	}

	/**
	 * The requests received for one path (tokengap also scrapes /metrics and reads
	 * /v1/models).
	 */
	public List<Received> received(String path) {
		return this.received.stream().filter((r) -> r.uri().equals(path) || r.uri().startsWith(path + "?")).toList();
	}

	/** When each scripted step's write completed (System.nanoTime). */
	public List<Long> sentNanos() {
		return this.sentNanos;
	}

	@Override
	public void close() {
		this.server.disposeNow(Duration.ofSeconds(5));
	}

	/** A request as the upstream saw it. */
	public record Received(String method, String uri, HttpHeaders headers, String body) {
	}

	/** One write of a script: wait {@code delay}, then write and flush {@code bytes}. */
	public record Step(Duration delay, byte[] bytes) {

		public static Step of(long delayMillis, String text) {
			return new Step(Duration.ofMillis(delayMillis), text.getBytes(StandardCharsets.UTF_8));
		}

		public static List<Step> list(Step... steps) {
			return new ArrayList<>(List.of(steps));
		}

	}

}
