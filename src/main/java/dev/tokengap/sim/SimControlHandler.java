package dev.tokengap.sim;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.QueryStringDecoder;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

/**
 * The simulator's own endpoints, not vLLM's: {@code /sim/trace} (ground truth per output
 * token) and {@code /sim/faults} (global faults of {@code /metrics}).
 */
final class SimControlHandler {

	private final SimEngine engine;

	private final JsonMapper mapper;

	private final AtomicReference<MetricsFaults> faults;

	SimControlHandler(SimEngine engine, JsonMapper mapper, AtomicReference<MetricsFaults> faults) {
		this.engine = engine;
		this.mapper = mapper;
		this.faults = faults;
	}

	Mono<Void> trace(HttpServerRequest request, HttpServerResponse response) {
		List<String> ids = new QueryStringDecoder(request.uri()).parameters().get("request");
		String requestId = (ids != null && !ids.isEmpty()) ? ids.get(0) : null;
		return sendJson(response, this.mapper.writeValueAsString(this.engine.trace(requestId)));
	}

	Mono<Void> setFaults(HttpServerRequest request, HttpServerResponse response) {
		return request.receive()
			.aggregate()
			.asString(StandardCharsets.UTF_8)
			.defaultIfEmpty("{}")
			.flatMap((body) -> applyFaults(response, body));
	}

	private Mono<Void> applyFaults(HttpServerResponse response, String body) {
		try {
			MetricsFaults requested = this.mapper.readValue(body, MetricsFaults.class);
			this.faults.set(requested);
			return getFaults(response);
		}
		catch (JacksonException ex) {
			return CompletionHandler.sendError(response, InvalidRequestException.badRequest(
					"Faults must look like {\"metricsDelayMs\":N,\"metricsStatus\":500}: " + ex.getOriginalMessage()));
		}
	}

	Mono<Void> clearFaults(HttpServerRequest request, HttpServerResponse response) {
		this.faults.set(MetricsFaults.NONE);
		return getFaults(response);
	}

	Mono<Void> getFaults(HttpServerResponse response) {
		return sendJson(response, this.mapper.writeValueAsString(this.faults.get()));
	}

	private static Mono<Void> sendJson(HttpServerResponse response, String json) {
		return response.header(HttpHeaderNames.CONTENT_TYPE, CompletionHandler.JSON).sendString(Mono.just(json)).then();
	}

}
