package dev.tokengap.sim;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code POST /v1/responses} (OpenAI Responses API) as vLLM serves it: a response object,
 * or with {@code "stream": true} the typed events of {@link ResponsesStream}. The id is
 * the body's {@code request_id}, else a fresh {@code resp_…}; {@code X-Request-Id} only
 * names the engine trace.
 */
final class ResponsesHandler {

	private final SimEngine engine;

	private final CompletionRequestParser parser;

	ResponsesHandler(SimEngine engine, JsonMapper mapper) {
		this.engine = engine;
		this.parser = new CompletionRequestParser(engine.properties(), mapper);
	}

	Mono<Void> responses(HttpServerRequest request, HttpServerResponse response) {
		return CompletionHandler.body(request).flatMap((body) -> respond(request, response, body));
	}

	private Mono<Void> respond(HttpServerRequest request, HttpServerResponse response, String body) {
		JsonNode root;
		CompletionRequest call;
		FaultHeaders faults;
		try {
			root = this.parser.readObject(body);
			call = this.parser.parseResponses(root);
			faults = FaultHeaders.from(request.requestHeaders());
		}
		catch (InvalidRequestException ex) {
			return CompletionHandler.sendError(response, ex);
		}
		JsonNode requestId = root.path("request_id");
		String id = requestId.isString() ? requestId.stringValue() : "resp_" + CompletionHandler.randomId();
		String traceId = request.requestHeaders().get("X-Request-Id");
		ResponsesJson json = new ResponsesJson(call, ContentPlan.of(call, faults, this.engine.properties()), id,
				System.currentTimeMillis() / 1000, this.engine.properties().model());
		SequenceGroup group = new SequenceGroup(this.engine, (traceId != null) ? traceId : id, call, faults,
				request.requestHeaders().get("traceparent"));
		return group.answer(response,
				(outputs) -> call.stream() ? SseResponder.stream(response, outputs, new ResponsesStream(json), faults)
						: whole(response, outputs, json),
				(ex) -> CompletionHandler.sendError(response, ex));
	}

	private static Mono<Void> whole(HttpServerResponse response, Flux<ChoiceOutput> outputs, ResponsesJson json) {
		return CompletionHandler.sendJson(response,
				outputs.map(ChoiceOutput::token).collectList().map(json::fullResponse));
	}

}
