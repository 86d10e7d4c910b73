package dev.tokengap.sim;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicReference;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelOption;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code POST /v1/chat/completions} and {@code POST /v1/completions}: submits the request
 * to the engine and writes its outputs as vLLM does, one flushed SSE event per engine
 * output.
 */
final class CompletionHandler {

	static final String EVENT_STREAM = "text/event-stream; charset=utf-8";

	static final String JSON = "application/json";

	private static final String DONE = "data: [DONE]\n\n";

	private final SimEngine engine;

	private final CompletionRequestParser parser;

	CompletionHandler(SimEngine engine, JsonMapper mapper) {
		this.engine = engine;
		this.parser = new CompletionRequestParser(engine.properties(), mapper);
	}

	Mono<Void> chat(HttpServerRequest request, HttpServerResponse response) {
		return handle(request, response, true);
	}

	Mono<Void> completions(HttpServerRequest request, HttpServerResponse response) {
		return handle(request, response, false);
	}

	private Mono<Void> handle(HttpServerRequest request, HttpServerResponse response, boolean chat) {
		return request.receive()
			.aggregate()
			.asString(StandardCharsets.UTF_8)
			.defaultIfEmpty("")
			.flatMap((body) -> respond(request, response, chat, body));
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
		String id = (chat ? "chatcmpl-" : "cmpl-")
				+ ((requestId != null) ? requestId : UUID.randomUUID().toString().replace("-", ""));
		SimSequence sequence = new SimSequence((requestId != null) ? requestId : id, call.promptText(),
				call.promptTokens(), call.maxTokens(), this.engine.vocabulary().textsFor(call.promptText()),
				faults.engineStallToken(), faults.engineStall().toNanos());
		OpenAiJson json = new OpenAiJson(call, id, System.currentTimeMillis() / 1000, this.engine.properties().model());
		try {
			this.engine.submit(sequence);
		}
		catch (InvalidRequestException ex) {
			return sendError(response, ex);
		}
		// The engine thread only enqueues an output; formatting and writing run on the
		// connection's event loop, as vLLM's engine core hands outputs to its API server.
		Flux<TokenOutput> outputs = sequence.outputs()
			.doOnCancel(() -> this.engine.abort(sequence))
			.publishOn(eventLoopOf(response));
		return call.stream() ? stream(response, outputs, json, faults) : whole(response, outputs, json);
	}

	private Mono<Void> stream(HttpServerResponse response, Flux<TokenOutput> outputs, OpenAiJson json,
			FaultHeaders faults) {
		if (faults.httpStallToken() >= 0) {
			outputs = outputs.concatMap((output) -> faults.holdsToken(output.index())
					? Mono.delay(faults.httpStall()).thenReturn(output) : Mono.just(output));
		}
		if (faults.resets()) {
			outputs = outputs.takeUntil((output) -> output.index() >= faults.resetAfterToken());
		}
		SseEvents sse = new SseEvents(json, faults);
		Flux<ByteBuf> events = outputs.concatMapIterable(sse::of)
			.onErrorResume((ex) -> Flux.just(inBandError(ex), DONE))
			.map((event) -> ByteBufUtil.writeUtf8(response.alloc(), event));
		// Headers go out at once, as vLLM's; the first event only follows the prefill.
		response.status(HttpResponseStatus.OK).header(HttpHeaderNames.CONTENT_TYPE, EVENT_STREAM);
		Mono<Void> sent = response.sendHeaders().send(events, (buffer) -> true).then();
		return faults.resets() ? sent.then(Mono.defer(() -> reset(response))) : sent;
	}

	private Mono<Void> whole(HttpServerResponse response, Flux<TokenOutput> outputs, OpenAiJson json) {
		return outputs.collectList()
			.flatMap((list) -> response.status(HttpResponseStatus.OK)
				.header(HttpHeaderNames.CONTENT_TYPE, JSON)
				.sendString(Mono.just(json.fullResponse(list)))
				.then());
	}

	private static Scheduler eventLoopOf(HttpServerResponse response) {
		AtomicReference<Executor> eventLoop = new AtomicReference<>();
		response.withConnection((connection) -> eventLoop.set(connection.channel().eventLoop()));
		return Schedulers.fromExecutor(eventLoop.get());
	}

	/** Closes with a TCP reset (SO_LINGER 0): no terminating chunk, no [DONE]. */
	private static Mono<Void> reset(HttpServerResponse response) {
		response.withConnection((connection) -> {
			connection.channel().config().setOption(ChannelOption.SO_LINGER, 0);
			connection.channel().close();
		});
		return Mono.empty();
	}

	private static String inBandError(Throwable ex) {
		return "data: " + OpenAiJson.errorBody(String.valueOf(ex.getMessage()), "InternalServerError", null, 500)
				+ "\n\n";
	}

	static Mono<Void> sendError(HttpServerResponse response, InvalidRequestException ex) {
		return response.status(ex.status())
			.header(HttpHeaderNames.CONTENT_TYPE, JSON)
			.sendString(Mono.just(OpenAiJson.error(ex)))
			.then();
	}

	/**
	 * The SSE events one engine output becomes: prelude before token 0, usage and [DONE]
	 * after the last.
	 */
	private record SseEvents(OpenAiJson json, FaultHeaders faults) {

		List<String> of(TokenOutput output) {
			List<String> events = new ArrayList<>(4);
			if (output.index() == 0 && this.json.chat()) {
				events.add(event(this.json.prelude()));
			}
			events.add(event(this.json.tokenChunk(output)));
			if (output.last() && output.index() != this.faults.resetAfterToken()) {
				if (this.json.includeUsage()) {
					events.add(event(this.json.usageChunk(output)));
				}
				events.add(DONE);
			}
			return events;
		}

		private static String event(String data) {
			return "data: " + data + "\n\n";
		}

	}

}
