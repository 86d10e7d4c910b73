package dev.tokengap.sim;

import java.util.List;

/**
 * The stream shape of {@code /v1/audio/transcriptions} and
 * {@code /v1/audio/translations}: {@code data:} chunks with
 * {@code choices[0].delta.content}, no role prelude, written without unset fields (so
 * {@code finish_reason} only on the last), the usage chunk when asked for and
 * {@code [DONE]}.
 */
final class AudioStream implements StreamShape {

	private final String head;

	private final CompletionRequest request;

	private int completionTokens;

	/**
	 * @param object {@code transcription.chunk} or {@code translation.chunk}
	 */
	AudioStream(CompletionRequest request, String id, String object, long created, String model) {
		this.request = request;
		this.head = "{\"id\":" + OpenAiJson.quote(id) + ",\"object\":" + OpenAiJson.quote(object) + ",\"created\":"
				+ created + ",\"model\":" + OpenAiJson.quote(model) + ",";
	}

	@Override
	public List<String> of(ChoiceOutput output) {
		TokenOutput token = output.token();
		this.completionTokens = token.completionTokens();
		String end = token.last()
				? ",\"finish_reason\":" + OpenAiJson.quote(token.finishReason()) + ",\"stop_reason\":null" : "";
		String usage = this.request.continuousUsage() ? "," + usage(token.completionTokens()) : "";
		return List.of(event(this.head + "\"choices\":[{\"delta\":{\"content\":" + OpenAiJson.quote(token.text()) + "}"
				+ end + "}]" + usage + "}"));
	}

	@Override
	public List<String> end() {
		if (!this.request.includeUsage()) {
			return List.of(OpenAiStream.DONE);
		}
		return List.of(event(this.head + "\"choices\":[]," + usage(this.completionTokens) + "}"), OpenAiStream.DONE);
	}

	@Override
	public List<String> error(String message) {
		return List.of(event(SseResponder.openAiError(message)), OpenAiStream.DONE);
	}

	@Override
	public List<String> dropped(ChoiceOutput first) {
		return List.of(OpenAiStream.DONE);
	}

	private String usage(int completion) {
		int prompt = this.request.promptTokens();
		return "\"usage\":{\"prompt_tokens\":" + prompt + ",\"completion_tokens\":" + completion + ",\"total_tokens\":"
				+ (prompt + completion) + "}";
	}

	private static String event(String data) {
		return "data: " + data + "\n\n";
	}

}
