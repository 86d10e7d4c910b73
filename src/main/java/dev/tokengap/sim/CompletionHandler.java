package dev.tokengap.sim;

import java.nio.charset.StandardCharsets;
import java.util.UUID;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code POST /v1/chat/completions} and {@code POST /v1/completions}: submits the request
 * to the engine, one sequence per choice, and writes its outputs as vLLM does, one
 * flushed SSE event per choice per engine output.
 */
final class CompletionHandler {

	static final String JSON = "application/json";

	private final SimEngine engine;

	private final CompletionRequestParser parser;

	CompletionHandler(SimEngine engine, JsonMapper mapper) {
		this.engine = engine;
		this.parser = new CompletionRequestParser(engine.properties(), mapper);
	}

	Mono<Void> chat(HttpServerRequest request, HttpServerResponse response) {
		return body(request).flatMap((body) -> respond(request, response, true, body));
	}

	Mono<Void> completions(HttpServerRequest request, HttpServerResponse response) {
		return body(request).flatMap((body) -> respond(request, response, false, body));
	}

	static Mono<String> body(HttpServerRequest request) {
		return request.receive().aggregate().asString(StandardCharsets.UTF_8).defaultIfEmpty("");
	}

	private Mono<Void> respond(HttpServerRequest request, HttpServerResponse response, boolean chat, String body) {
		CompletionRequest call;
		FaultHeaders faults;
		try {
			call = this.parser.parse(body, chat);
			faults = FaultHeaders.from(request.requestHeaders());
		}
		catch (InvalidRequestException ex) {
			return sendError(response, ex);
		}
		String requestId = request.requestHeaders().get("X-Request-Id");
		String id = (chat ? "chatcmpl-" : "cmpl-") + ((requestId != null) ? requestId : randomId());
		ContentPlan plan = ContentPlan.of(call, faults, this.engine.properties());
		OpenAiJson json = new OpenAiJson(call, plan, id, System.currentTimeMillis() / 1000,
				this.engine.properties().model());
		SequenceGroup group = new SequenceGroup(this.engine, (requestId != null) ? requestId : id, call, faults,
				request.requestHeaders().get("traceparent"));
		return group.answer(response,
				(outputs) -> call.stream() ? SseResponder.stream(response, outputs, new OpenAiStream(json), faults)
						: whole(response, outputs, json),
				(ex) -> sendError(response, ex));
	}

	private static Mono<Void> whole(HttpServerResponse response, Flux<ChoiceOutput> outputs, OpenAiJson json) {
		return sendJson(response, outputs.collectList().map(json::fullResponse));
	}

	static Mono<Void> sendJson(HttpServerResponse response, Mono<String> body) {
		return body.flatMap((json) -> response.status(HttpResponseStatus.OK)
			.header(HttpHeaderNames.CONTENT_TYPE, JSON)
			.sendString(Mono.just(json))
			.then());
	}

	static String randomId() {
		return UUID.randomUUID().toString().replace("-", "");
	}

	static Mono<Void> sendError(HttpServerResponse response, InvalidRequestException ex) {
		return response.status(ex.status())
			.header(HttpHeaderNames.CONTENT_TYPE, JSON)
			.sendString(Mono.just(OpenAiJson.error(ex)))
			.then();
	}

}
