package dev.tokengap.lab;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.QueryStringDecoder;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

/**
 * The overhead benchmark's backend: a vLLM-shaped SSE server whose every event carries
 * the {@code System.nanoTime()} at which it was produced, in a comment line before its
 * data line ({@code : sent=<nanos>}). On Linux {@code nanoTime} is
 * {@code CLOCK_MONOTONIC}, shared by every process on the machine, so a client on the
 * same host can compute each event's one-way delay.
 *
 * <pre>
 * POST /v1/chat/completions?interval_ms=20&amp;events=500   one stream: an event every interval_ms
 * GET  /v1/models, /metrics, /health                      enough of vLLM for tokengap's side calls
 * </pre>
 *
 * Run:
 * {@code java -cp target/test-classes:target/classes:$(cat target/test-classpath.txt)
 * dev.tokengap.lab.StampedSseBackend --port 27100} (see {@code bench/overhead.sh}).
 */
public final class StampedSseBackend {

	static final String MODEL = "bench";

	private static final byte[] DATA = ("\ndata: {\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\","
			+ "\"created\":1700000000,\"model\":\"bench\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" token\"},"
			+ "\"logprobs\":null,\"finish_reason\":null}]}\n\n")
		.getBytes(StandardCharsets.UTF_8);

	private static final String TAIL = "data: {\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\","
			+ "\"created\":1700000000,\"model\":\"bench\",\"choices\":[],\"usage\":{\"prompt_tokens\":8,"
			+ "\"total_tokens\":%d,\"completion_tokens\":%d}}\n\ndata: [DONE]\n\n";

	private static final String METRICS = """
			# HELP vllm:num_requests_running Number of requests in model execution batches.
			# TYPE vllm:num_requests_running gauge
			vllm:num_requests_running{engine="0",model_name="bench"} 0.0
			# HELP vllm:num_requests_waiting Number of requests waiting to be processed.
			# TYPE vllm:num_requests_waiting gauge
			vllm:num_requests_waiting{engine="0",model_name="bench"} 0.0
			# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.
			# TYPE vllm:kv_cache_usage_perc gauge
			vllm:kv_cache_usage_perc{engine="0",model_name="bench"} 0.0
			""";

	private StampedSseBackend() {
	}

	static DisposableServer start(String host, int port) {
		return HttpServer.create()
			.host(host)
			.port(port)
			.route((routes) -> routes.post("/v1/chat/completions", StampedSseBackend::stream)
				.get("/v1/models",
						(request, response) -> text(response, "application/json",
								"{\"object\":\"list\",\"data\":[{\"id\":\"" + MODEL + "\",\"object\":\"model\"}]}"))
				.get("/metrics", (request, response) -> text(response, "text/plain; version=0.0.4", METRICS))
				.get("/health", (request, response) -> response.send()))
			.bindNow(Duration.ofSeconds(10));
	}

	private static Mono<Void> text(HttpServerResponse response, String type, String body) {
		return response.header(HttpHeaderNames.CONTENT_TYPE, type).sendString(Mono.just(body)).then();
	}

	private static Flux<Void> stream(HttpServerRequest request, HttpServerResponse response) {
		QueryStringDecoder query = new QueryStringDecoder(request.uri());
		long interval = param(query, "interval_ms", 20);
		long events = param(query, "events", 100);
		ByteBufAllocator alloc = response.alloc();
		Flux<ByteBuf> body = Flux.interval(Duration.ZERO, Duration.ofMillis(interval))
			.take(events)
			.map((i) -> event(alloc))
			.concatWith(Mono.fromSupplier(() -> tail(alloc, events)));
		response.header(HttpHeaderNames.CONTENT_TYPE, "text/event-stream")
			.header(HttpHeaderNames.CACHE_CONTROL, "no-cache");
		// Every event is its own chunk, flushed at once.
		return request.receive().then().thenMany(response.send(body, (buf) -> true));
	}

	/**
	 * Stamped as late as this side can: when the event's bytes are made, just before the
	 * write.
	 */
	private static ByteBuf event(ByteBufAllocator alloc) {
		ByteBuf buf = alloc.buffer(DATA.length + 32);
		buf.writeCharSequence(": sent=", StandardCharsets.US_ASCII);
		buf.writeCharSequence(Long.toString(System.nanoTime()), StandardCharsets.US_ASCII);
		buf.writeBytes(DATA);
		return buf;
	}

	private static ByteBuf tail(ByteBufAllocator alloc, long events) {
		ByteBuf buf = alloc.buffer();
		buf.writeCharSequence(String.format(TAIL, events + 8, events), StandardCharsets.US_ASCII);
		return buf;
	}

	private static long param(QueryStringDecoder query, String name, long fallback) {
		List<String> values = query.parameters().get(name);
		return (values == null || values.isEmpty()) ? fallback : Long.parseLong(values.get(0));
	}

	public static void main(String[] args) throws InterruptedException {
		String host = "127.0.0.1";
		int port = 27100;
		for (int i = 0; i + 1 < args.length; i += 2) {
			switch (args[i]) {
				case "--host" -> host = args[i + 1];
				case "--port" -> port = Integer.parseInt(args[i + 1]);
				default -> throw new IllegalArgumentException("unknown option " + args[i]);
			}
		}
		LabLogging.quiet();
		DisposableServer server = start(host, port);
		System.out.println("stamped SSE backend on http://" + host + ":" + server.port());
		server.onDispose().block();
	}

}
