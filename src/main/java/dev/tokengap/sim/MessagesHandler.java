package dev.tokengap.sim;

import io.netty.handler.codec.http.HttpHeaderNames;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code POST /v1/messages} (Anthropic Messages API) as vLLM serves it: a message, or
 * with {@code "stream": true} the events of {@link MessagesStream}; errors in Anthropic's
 * shape.
 */
final class MessagesHandler {

	private final SimEngine engine;

	private final CompletionRequestParser parser;

	MessagesHandler(SimEngine engine, JsonMapper mapper) {
		this.engine = engine;
		this.parser = new CompletionRequestParser(engine.properties(), mapper);
	}

	Mono<Void> messages(HttpServerRequest request, HttpServerResponse response) {
		return CompletionHandler.body(request).flatMap((body) -> respond(request, response, body));
	}

	private Mono<Void> respond(HttpServerRequest request, HttpServerResponse response, String body) {
		CompletionRequest call;
		FaultHeaders faults;
		try {
			call = this.parser.parseMessages(this.parser.readObject(body));
			faults = FaultHeaders.from(request.requestHeaders());
		}
		catch (InvalidRequestException ex) {
			return sendError(response, ex);
		}
		String requestId = request.requestHeaders().get("X-Request-Id");
		String id = "msg_" + ((requestId != null) ? requestId : CompletionHandler.randomId());
		MessagesJson json = new MessagesJson(call, ContentPlan.of(call, faults, this.engine.properties()), id,
				this.engine.properties().model());
		SequenceGroup group = new SequenceGroup(this.engine, (requestId != null) ? requestId : id, call, faults,
				request.requestHeaders().get("traceparent"));
		return group.answer(response,
				(outputs) -> call.stream() ? SseResponder.stream(response, outputs, new MessagesStream(json), faults)
						: whole(response, outputs, json),
				(ex) -> sendError(response, ex));
	}

	private static Mono<Void> whole(HttpServerResponse response, Flux<ChoiceOutput> outputs, MessagesJson json) {
		return CompletionHandler.sendJson(response,
				outputs.map(ChoiceOutput::token).collectList().map(json::fullMessage));
	}

	private static Mono<Void> sendError(HttpServerResponse response, InvalidRequestException ex) {
		return response.status(ex.status())
			.header(HttpHeaderNames.CONTENT_TYPE, CompletionHandler.JSON)
			.sendString(Mono.just(MessagesJson.error(ex)))
			.then();
	}

}
