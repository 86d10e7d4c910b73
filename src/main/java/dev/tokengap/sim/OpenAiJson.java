package dev.tokengap.sim;

import java.util.List;

import tools.jackson.core.io.JsonStringEncoder;

/**
 * vLLM's response bodies for one request, written by hand as one-line JSON with vLLM's
 * field order: chat serialises chunks without unset fields, completions with all fields
 * ({@code "usage":null}).
 */
final class OpenAiJson {

	private final CompletionRequest request;

	/**
	 * {@code {"id":…,"object":…,"created":…,"model":…,} } shared by every chunk of the
	 * request.
	 */
	private final String head;

	private final String fullHead;

	OpenAiJson(CompletionRequest request, String id, long created, String model) {
		this.request = request;
		String common = ",\"created\":" + created + ",\"model\":" + quote(model) + ",";
		String idField = "{\"id\":" + quote(id) + ",\"object\":";
		this.head = idField + (request.chat() ? "\"chat.completion.chunk\"" : "\"text_completion\"") + common;
		this.fullHead = idField + (request.chat() ? "\"chat.completion\"" : "\"text_completion\"") + common;
	}

	boolean chat() {
		return this.request.chat();
	}

	boolean includeUsage() {
		return this.request.includeUsage();
	}

	/** The chat role prelude vLLM sends with the first token. */
	String prelude() {
		String usage = this.request.continuousUsage() ? "," + usage(0, false) : "";
		return this.head + "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},"
				+ "\"logprobs\":null,\"finish_reason\":null}]" + usage + "}";
	}

	String tokenChunk(TokenOutput output) {
		StringBuilder json = new StringBuilder(this.head.length() + 160).append(this.head);
		json.append("\"choices\":[{\"index\":0,");
		json.append(this.request.chat() ? "\"delta\":{\"content\":" : "\"text\":").append(quote(output.text()));
		json.append(this.request.chat() ? "}," : ",").append("\"logprobs\":null,\"finish_reason\":");
		json.append(output.last() ? quote(output.finishReason()) : "null");
		if (output.last() || !this.request.chat()) {
			json.append(",\"stop_reason\":null");
		}
		json.append("}]");
		if (this.request.continuousUsage()) {
			json.append(',').append(usage(output.completionTokens(), !this.request.chat()));
		}
		else if (!this.request.chat()) {
			json.append(",\"usage\":null");
		}
		return json.append('}').toString();
	}

	/** The {@code "choices":[]} chunk that carries the final usage. */
	String usageChunk(TokenOutput last) {
		return this.head + "\"choices\":[]," + usage(last.completionTokens(), !this.request.chat()) + "}";
	}

	String fullResponse(List<TokenOutput> outputs) {
		StringBuilder text = new StringBuilder();
		outputs.forEach((output) -> text.append(output.text()));
		TokenOutput last = outputs.get(outputs.size() - 1);
		String choice = this.request.chat()
				? "{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":" + quote(text)
						+ ",\"refusal\":null,\"annotations\":null,\"audio\":null,\"function_call\":null,"
						+ "\"tool_calls\":[],\"reasoning_content\":null},\"logprobs\":null,\"finish_reason\":"
						+ quote(last.finishReason()) + ",\"stop_reason\":null}"
				: "{\"index\":0,\"text\":" + quote(text) + ",\"logprobs\":null,\"finish_reason\":"
						+ quote(last.finishReason()) + ",\"stop_reason\":null,\"prompt_logprobs\":null}";
		return this.fullHead + "\"choices\":[" + choice + "],\"service_tier\":null,\"system_fingerprint\":null,"
				+ usage(last.completionTokens(), true) + (this.request.chat() ? ",\"prompt_logprobs\":null" : "")
				+ ",\"kv_transfer_params\":null}";
	}

	private String usage(int completionTokens, boolean withDetails) {
		int prompt = this.request.promptTokens();
		return "\"usage\":{\"prompt_tokens\":" + prompt + ",\"total_tokens\":" + (prompt + completionTokens)
				+ ",\"completion_tokens\":" + completionTokens + (withDetails ? ",\"prompt_tokens_details\":null" : "")
				+ "}";
	}

	static String error(InvalidRequestException ex) {
		return errorBody(ex.getMessage(), ex.type(), ex.param(), ex.status());
	}

	static String errorBody(String message, String type, String param, int code) {
		return "{\"error\":{\"message\":" + quote(message) + ",\"type\":" + quote(type) + ",\"param\":"
				+ ((param != null) ? quote(param) : "null") + ",\"code\":" + code + "}}";
	}

	static String quote(CharSequence text) {
		StringBuilder quoted = new StringBuilder(text.length() + 2).append('"');
		JsonStringEncoder.getInstance().quoteAsString(text, quoted);
		return quoted.append('"').toString();
	}

}
