package dev.tokengap.sim;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.http.server.HttpServerRoutes;
import reactor.netty.resources.LoopResources;
import tools.jackson.databind.json.JsonMapper;

/**
 * A running vLLM simulator: a {@link SimEngine} behind vLLM's OpenAI-compatible HTTP API
 * on a plain Reactor Netty server, so it runs in-process on any port. Its event loops are
 * its own, so a proxy in the same JVM never shares a thread with the engine's HTTP side.
 */
public final class SimulatorServer implements AutoCloseable {

	private final SimEngine engine;

	private final LoopResources loops;

	private final DisposableServer server;

	private SimulatorServer(SimEngine engine, LoopResources loops, DisposableServer server) {
		this.engine = engine;
		this.loops = loops;
		this.server = server;
	}

	/**
	 * Starts the engine thread and binds the HTTP server.
	 * @param properties the simulator's settings ({@code port} is not used: the argument
	 * is)
	 * @param host address to bind, e.g. {@code 127.0.0.1}
	 * @param port port to bind, 0 for an ephemeral one
	 * @return the running simulator
	 */
	public static SimulatorServer start(SimulatorProperties properties, String host, int port) {
		SimEngine engine = new SimEngine(properties);
		LoopResources loops = LoopResources.create("tokengap-sim-http", 1, 2, true);
		try {
			DisposableServer server = HttpServer.create()
				.runOn(loops)
				.host(host)
				.port(port)
				.route((routes) -> routes(routes, engine))
				.bindNow(Duration.ofSeconds(10));
			return new SimulatorServer(engine, loops, server);
		}
		catch (RuntimeException ex) {
			engine.close();
			loops.dispose();
			throw ex;
		}
	}

	private static void routes(HttpServerRoutes routes, SimEngine engine) {
		JsonMapper mapper = JsonMapper.builder().build();
		AtomicReference<MetricsFaults> faults = new AtomicReference<>(MetricsFaults.NONE);
		CompletionHandler completions = new CompletionHandler(engine, mapper);
		MetricsHandler metrics = new MetricsHandler(engine, faults);
		SimControlHandler control = new SimControlHandler(engine, mapper, faults);
		ResponsesHandler responses = new ResponsesHandler(engine, mapper);
		MessagesHandler messages = new MessagesHandler(engine, mapper);
		AudioHandler audio = new AudioHandler(engine);
		String models = ModelList.json(engine.properties());
		routes.post("/v1/chat/completions", completions::chat)
			.post("/v1/completions", completions::completions)
			.post("/v1/responses", responses::responses)
			.post("/v1/messages", messages::messages)
			.post("/v1/audio/transcriptions", audio::transcriptions)
			.post("/v1/audio/translations", audio::translations)
			.get("/v1/models", (request, response) -> json(response, HttpResponseStatus.OK, models))
			.get("/health", (request, response) -> health(response, engine))
			.get("/metrics", metrics::metrics)
			.get("/sim/trace", control::trace)
			.post("/sim/faults", control::setFaults)
			.delete("/sim/faults", control::clearFaults)
			.get("/sim/faults", (request, response) -> control.getFaults(response))
			.route((request) -> true,
					(request, response) -> json(response, HttpResponseStatus.NOT_FOUND, "{\"detail\":\"Not Found\"}"));
	}

	/** vLLM answers 200 with no body, or 503 once its engine is dead. */
	private static Mono<Void> health(HttpServerResponse response, SimEngine engine) {
		return response.status(engine.healthy() ? HttpResponseStatus.OK : HttpResponseStatus.SERVICE_UNAVAILABLE)
			.send();
	}

	private static Mono<Void> json(HttpServerResponse response, HttpResponseStatus status, String body) {
		return response.status(status)
			.header(HttpHeaderNames.CONTENT_TYPE, CompletionHandler.JSON)
			.sendString(Mono.just(body))
			.then();
	}

	/** The port the server is bound to. */
	public int port() {
		return this.server.port();
	}

	/** The server's base URL, {@code http://host:port}. */
	public String baseUrl() {
		String host = this.server.host();
		return "http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + this.server.port();
	}

	/** The live engine, for its state and its ground-truth trace. */
	public SimEngine engine() {
		return this.engine;
	}

	/** Stops the HTTP server (open streams are cut), then the engine thread. */
	@Override
	public void close() {
		this.server.disposeNow(Duration.ofSeconds(5));
		this.engine.close();
		this.loops.disposeLater(Duration.ZERO, Duration.ofSeconds(5)).block(Duration.ofSeconds(6));
	}

}
