package dev.tokengap.sim;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import tools.jackson.core.io.JsonStringEncoder;

/**
 * vLLM's chat and text completion bodies for one request, written by hand as one-line
 * JSON with vLLM's field order and, as current vLLM, without unset fields: no
 * {@code usage} key on a chunk unless usage is asked for, but
 * {@code "prompt_token_ids":null,"token_ids":null} on each completions choice and
 * {@code system_fingerprint} on a choice's last completions chunk. The per-request
 * {@code metrics}, when asked for, come last, as vLLM's response models declare them.
 */
final class OpenAiJson {

	private final CompletionRequest request;

	private final ContentPlan plan;

	/**
	 * {@code {"id":…,"object":…,"created":…,"model":…,} } shared by every chunk of the
	 * request.
	 */
	private final String head;

	private final String fullHead;

	OpenAiJson(CompletionRequest request, ContentPlan plan, String id, long created, String model) {
		this.request = request;
		this.plan = plan;
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

	int choices() {
		return this.request.n();
	}

	ContentPlan plan() {
		return this.plan;
	}

	/** The chat role prelude of one choice, which vLLM sends with the first token. */
	String prelude(int choice) {
		String usage = this.request.continuousUsage() ? "," + usage(0, false) : "";
		return this.head + "\"choices\":[{\"index\":" + choice
				+ ",\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"logprobs\":null,\"finish_reason\":null}]"
				+ usage + "}";
	}

	/**
	 * A chat chunk of one choice.
	 * @param output the engine output it carries
	 * @param delta the JSON object of its {@code delta}
	 */
	String chatChunk(ChoiceOutput output, String delta) {
		TokenOutput token = output.token();
		StringBuilder json = new StringBuilder(this.head.length() + 160).append(this.head);
		json.append("\"choices\":[{\"index\":").append(output.choice()).append(",\"delta\":").append(delta);
		json.append(",\"logprobs\":null,\"finish_reason\":");
		json.append(token.last() ? quote(this.plan.finishReason(token)) + ",\"stop_reason\":null" : "null");
		json.append("}]");
		if (this.request.continuousUsage()) {
			json.append(',').append(usage(token.completionTokens(), false));
		}
		return json.append('}').toString();
	}

	/** A completions chunk of one choice. */
	String textChunk(ChoiceOutput output) {
		TokenOutput token = output.token();
		StringBuilder json = new StringBuilder(this.head.length() + 200).append(this.head);
		json.append("\"choices\":[{\"index\":").append(output.choice());
		json.append(",\"text\":").append(quote(token.text())).append(",\"logprobs\":null,\"finish_reason\":");
		json.append(token.last() ? quote(token.finishReason()) : "null");
		json.append(",\"stop_reason\":null,\"prompt_token_ids\":null,\"token_ids\":null}]");
		if (this.request.continuousUsage()) {
			json.append(',').append(usage(token.completionTokens(), true));
		}
		if (token.last()) {
			json.append(",\"system_fingerprint\":null");
		}
		return json.append('}').toString();
	}

	/**
	 * The {@code "choices":[]} chunk that carries the final usage of all choices, and the
	 * per-request metrics when asked for; vLLM writes it without nulls, so suppressed
	 * metrics are left out.
	 * @param completionTokens output tokens of all choices
	 * @param timings the engine timestamps of the request's sequence, {@code null} if
	 * unknown
	 */
	String usageChunk(int completionTokens, RequestTimings timings) {
		String metrics = (this.request.perRequestMetrics() && this.request.metricsAttributable() && timings != null)
				? ",\"metrics\":" + PerRequestMetrics.json(timings, true) : "";
		return this.head + "\"choices\":[]," + usage(completionTokens, !this.request.chat()) + metrics + "}";
	}

	String fullResponse(List<ChoiceOutput> outputs) {
		List<String> choices = new ArrayList<>(choices());
		int completionTokens = 0;
		for (int choice = 0; choice < choices(); choice++) {
			int index = choice;
			List<TokenOutput> tokens = outputs.stream()
				.filter((output) -> output.choice() == index)
				.map(ChoiceOutput::token)
				.toList();
			choices.add(this.request.chat() ? fullChatChoice(choice, tokens) : fullTextChoice(choice, tokens));
			completionTokens += tokens.get(tokens.size() - 1).completionTokens();
		}
		return this.fullHead + "\"choices\":[" + String.join(",", choices)
				+ "],\"service_tier\":null,\"system_fingerprint\":null," + usage(completionTokens, true)
				+ (this.request.chat() ? ",\"prompt_logprobs\":null" : "") + ",\"kv_transfer_params\":null"
				+ fullMetrics(outputs) + "}";
	}

	/**
	 * {@code ,"metrics":…} of a whole body, last as in vLLM's response models:
	 * {@code null} when suppressed, nothing when not asked for.
	 */
	private String fullMetrics(List<ChoiceOutput> outputs) {
		if (!this.request.perRequestMetrics()) {
			return "";
		}
		RequestTimings timings = null;
		for (ChoiceOutput output : outputs) {
			timings = (output.token().timings() != null) ? output.token().timings() : timings;
		}
		return ",\"metrics\":" + ((this.request.metricsAttributable() && timings != null)
				? PerRequestMetrics.json(timings, false) : "null");
	}

	private String fullChatChoice(int index, List<TokenOutput> tokens) {
		StringBuilder reasoning = new StringBuilder();
		StringBuilder content = new StringBuilder();
		for (TokenOutput token : tokens) {
			if (this.plan.reasoning(token.index())) {
				reasoning.append(token.text());
			}
			else {
				content.append(this.plan.calls() ? this.plan.argumentsFragment(token) : token.text());
			}
		}
		TokenOutput last = tokens.get(tokens.size() - 1);
		String toolCalls = this.plan.calls()
				? "[{\"id\":" + quote(toolCallId()) + ",\"type\":\"function\",\"function\":{\"name\":"
						+ quote(this.plan.toolName()) + ",\"arguments\":" + quote(content) + "}}]"
				: "[]";
		String text = (this.plan.calls() || content.isEmpty()) ? "null" : quote(content);
		return "{\"index\":" + index + ",\"message\":{\"role\":\"assistant\",\"content\":" + text
				+ ",\"refusal\":null,\"annotations\":null,\"audio\":null,\"function_call\":null,\"tool_calls\":"
				+ toolCalls + ",\"reasoning\":" + (reasoning.isEmpty() ? "null" : quote(reasoning))
				+ "},\"logprobs\":null,\"finish_reason\":" + quote(this.plan.finishReason(last))
				+ ",\"stop_reason\":null}";
	}

	private static String fullTextChoice(int index, List<TokenOutput> tokens) {
		StringBuilder text = new StringBuilder();
		tokens.forEach((token) -> text.append(token.text()));
		String finishReason = quote(tokens.get(tokens.size() - 1).finishReason());
		return "{\"index\":" + index + ",\"text\":" + quote(text) + ",\"logprobs\":null,\"finish_reason\":"
				+ finishReason + ",\"stop_reason\":null,\"prompt_logprobs\":null}";
	}

	/**
	 * A tool call id as vLLM makes them: {@code chatcmpl-tool-} and a random hex uuid.
	 */
	static String toolCallId() {
		return "chatcmpl-tool-" + UUID.randomUUID().toString().replace("-", "");
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
