package dev.tokengap.sim;

import java.util.ArrayList;
import java.util.List;

/**
 * vLLM's {@code /v1/responses} bodies for one request: the response object and its output
 * items, in the field order of vLLM's pydantic models (OpenAI's, mostly alphabetical),
 * with every field the OpenAI SDKs require.
 */
final class ResponsesJson {

	private final CompletionRequest request;

	private final ContentPlan plan;

	private final String id;

	private final long createdAt;

	private final String model;

	ResponsesJson(CompletionRequest request, ContentPlan plan, String id, long createdAt, String model) {
		this.request = request;
		this.plan = plan;
		this.id = id;
		this.createdAt = createdAt;
		this.model = model;
	}

	ContentPlan plan() {
		return this.plan;
	}

	/**
	 * The response object.
	 * @param status {@code in_progress}, {@code completed} or {@code failed}
	 * @param items the JSON of its output items
	 * @param outputTokens output tokens so far, or -1 for {@code "usage":null}
	 * @param error the failure's message, or {@code null}
	 * @param timings the engine timestamps of the finished sequence for the per-request
	 * metrics, or {@code null} ({@code "metrics":null} when they are asked for)
	 */
	String response(String status, List<String> items, int outputTokens, String error, RequestTimings timings) {
		return "{\"id\":" + OpenAiJson.quote(this.id) + ",\"created_at\":" + this.createdAt + ",\"error\":"
				+ ((error != null) ? "{\"code\":\"server_error\",\"message\":" + OpenAiJson.quote(error) + "}" : "null")
				+ ",\"incomplete_details\":null,\"instructions\":null,\"metadata\":null,\"model\":"
				+ OpenAiJson.quote(this.model) + ",\"object\":\"response\",\"output\":[" + String.join(",", items)
				+ "],\"parallel_tool_calls\":true,\"temperature\":1.0,\"tool_choice\":\"auto\",\"tools\":[],"
				+ "\"top_p\":1.0,\"background\":false,\"max_output_tokens\":" + this.request.maxTokens()
				+ ",\"max_tool_calls\":null,\"previous_response_id\":null,\"prompt\":null,\"reasoning\":null,"
				+ "\"service_tier\":\"auto\",\"status\":" + OpenAiJson.quote(status)
				+ ",\"text\":null,\"top_logprobs\":null,\"truncation\":\"disabled\",\"usage\":"
				+ ((outputTokens >= 0) ? usage(outputTokens) : "null") + ",\"user\":null" + metrics(timings) + "}";
	}

	private String metrics(RequestTimings timings) {
		if (!this.request.perRequestMetrics()) {
			return "";
		}
		return ",\"metrics\":" + ((timings != null) ? PerRequestMetrics.json(timings, false) : "null");
	}

	private String usage(int outputTokens) {
		int input = this.request.promptTokens();
		int reasoning = Math.min(outputTokens, this.plan.reasoningTokens());
		return "{\"input_tokens\":" + input + ",\"input_tokens_details\":{\"cached_tokens\":0},\"output_tokens\":"
				+ outputTokens + ",\"output_tokens_details\":{\"reasoning_tokens\":" + reasoning + "},\"total_tokens\":"
				+ (input + outputTokens) + "}";
	}

	static String messageItem(String itemId, String status, String text) {
		return "{\"id\":" + OpenAiJson.quote(itemId) + ",\"content\":[" + ((text != null) ? textPart(text) : "")
				+ "],\"role\":\"assistant\",\"status\":" + OpenAiJson.quote(status) + ",\"type\":\"message\"}";
	}

	static String textPart(String text) {
		return "{\"annotations\":[],\"text\":" + OpenAiJson.quote(text)
				+ ",\"type\":\"output_text\",\"logprobs\":null}";
	}

	static String reasoningItem(String itemId, String status, String text) {
		return "{\"id\":" + OpenAiJson.quote(itemId) + ",\"summary\":[],\"type\":\"reasoning\",\"content\":"
				+ ((text != null) ? "[" + reasoningPart(text) + "]" : "null")
				+ ",\"encrypted_content\":null,\"status\":" + OpenAiJson.quote(status) + "}";
	}

	static String reasoningPart(String text) {
		return "{\"text\":" + OpenAiJson.quote(text) + ",\"type\":\"reasoning_text\"}";
	}

	/** The whole response of a request that was not streamed. */
	String fullResponse(List<TokenOutput> tokens) {
		StringBuilder reasoning = new StringBuilder();
		StringBuilder text = new StringBuilder();
		tokens.forEach((token) -> (this.plan.reasoning(token.index()) ? reasoning : text).append(token.text()));
		List<String> items = new ArrayList<>(2);
		if (!reasoning.isEmpty()) {
			items.add(reasoningItem("rs_" + CompletionHandler.randomId(), "completed", reasoning.toString()));
		}
		if (!text.isEmpty()) {
			items.add(messageItem("msg_" + CompletionHandler.randomId(), "completed", text.toString()));
		}
		TokenOutput last = tokens.get(tokens.size() - 1);
		return response("completed", items, last.completionTokens(), null, last.timings());
	}

}
