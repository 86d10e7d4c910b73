package dev.tokengap.sim;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

/**
 * {@code POST /v1/audio/transcriptions} and {@code POST /v1/audio/translations} as vLLM
 * serves them: a {@code multipart/form-data} request ({@code model}, {@code file},
 * {@code stream}, {@code stream_include_usage}, {@code stream_continuous_usage_stats},
 * {@code max_completion_tokens}); the audio's length is estimated from the file's size
 * (16 kHz 16-bit mono: 32,000 bytes a second, ten prompt tokens a second).
 */
final class AudioHandler {

	private static final long BYTES_PER_SECOND = 32_000;

	private static final long BYTES_PER_PROMPT_TOKEN = BYTES_PER_SECOND / 10;

	private final SimEngine engine;

	AudioHandler(SimEngine engine) {
		this.engine = engine;
	}

	Mono<Void> transcriptions(HttpServerRequest request, HttpServerResponse response) {
		return handle(request, response, "trsc-", "transcription.chunk");
	}

	Mono<Void> translations(HttpServerRequest request, HttpServerResponse response) {
		return handle(request, response, "trsl-", "translation.chunk");
	}

	private Mono<Void> handle(HttpServerRequest request, HttpServerResponse response, String idPrefix, String object) {
		if (!request.isMultipart()) {
			return CompletionHandler.sendError(response,
					InvalidRequestException.badRequest("The request body must be multipart/form-data"));
		}
		return request.receiveForm()
			.reduce(new AudioForm(), AudioForm::add)
			.flatMap((form) -> respond(request, response, form, idPrefix, object));
	}

	private Mono<Void> respond(HttpServerRequest request, HttpServerResponse response, AudioForm form, String idPrefix,
			String object) {
		CompletionRequest call;
		FaultHeaders faults;
		try {
			call = parse(form);
			faults = FaultHeaders.from(request.requestHeaders());
		}
		catch (InvalidRequestException ex) {
			return CompletionHandler.sendError(response, ex);
		}
		String requestId = request.requestHeaders().get("X-Request-Id");
		String id = idPrefix + ((requestId != null) ? requestId : CompletionHandler.randomId());
		SequenceGroup group = new SequenceGroup(this.engine, (requestId != null) ? requestId : id, call, faults,
				request.requestHeaders().get("traceparent"));
		AudioStream shape = new AudioStream(call, id, object, System.currentTimeMillis() / 1000,
				this.engine.properties().model());
		return group.answer(response, (outputs) -> call.stream() ? SseResponder.stream(response, outputs, shape, faults)
				: whole(response, outputs, form), (ex) -> CompletionHandler.sendError(response, ex));
	}

	private static Mono<Void> whole(HttpServerResponse response, Flux<ChoiceOutput> outputs, AudioForm form) {
		return CompletionHandler.sendJson(response,
				outputs.map((output) -> output.token().text())
					.collect(StringBuilder::new, StringBuilder::append)
					.map((text) -> "{\"text\":" + OpenAiJson.quote(text)
							+ ",\"usage\":{\"type\":\"duration\",\"seconds\":"
							+ Math.max(1, form.fileBytes() / BYTES_PER_SECOND) + "}}"));
	}

	private CompletionRequest parse(AudioForm form) {
		if (!form.hasFile()) {
			throw InvalidRequestException.badRequest("Field required: file");
		}
		String model = form.field("model");
		if (model != null && !this.engine.properties().serves(model)) {
			throw InvalidRequestException.unknownModel(model);
		}
		boolean stream = form.flag("stream");
		boolean includeUsage = stream && form.flag("stream_include_usage");
		boolean continuousUsage = includeUsage && form.flag("stream_continuous_usage_stats");
		int promptTokens = (int) Math.max(1, form.fileBytes() / BYTES_PER_PROMPT_TOKEN);
		String promptText = form.fileName() + ':' + form.fileBytes();
		return new CompletionRequest(false, promptText, promptTokens, maxTokens(form), stream, includeUsage,
				continuousUsage, 1, null, false, 1);
	}

	private int maxTokens(AudioForm form) {
		String value = form.field("max_completion_tokens");
		if (value == null) {
			return this.engine.properties().defaultMaxTokens();
		}
		try {
			int maxTokens = Integer.parseInt(value.trim());
			if (maxTokens >= 1) {
				return maxTokens;
			}
		}
		catch (NumberFormatException ex) {
			// answered below
		}
		throw InvalidRequestException.badRequest("max_completion_tokens must be a positive integer");
	}

}
