package dev.tokengap.sim;

import java.util.ArrayList;
import java.util.List;

/**
 * vLLM's Anthropic-style {@code /v1/messages} bodies for one request, in Anthropic's
 * field order ({@code type} first in events), without unset fields.
 */
final class MessagesJson {

	private final CompletionRequest request;

	private final ContentPlan plan;

	private final String id;

	private final String model;

	MessagesJson(CompletionRequest request, ContentPlan plan, String id, String model) {
		this.request = request;
		this.plan = plan;
		this.id = id;
		this.model = model;
	}

	ContentPlan plan() {
		return this.plan;
	}

	/**
	 * The message object.
	 * @param content the JSON of its content blocks
	 * @param stopReason its stop reason, or {@code null}
	 */
	String message(List<String> content, String stopReason, int outputTokens) {
		return "{\"id\":" + OpenAiJson.quote(this.id) + ",\"type\":\"message\",\"role\":\"assistant\",\"content\":["
				+ String.join(",", content) + "],\"model\":" + OpenAiJson.quote(this.model) + ",\"stop_reason\":"
				+ ((stopReason != null) ? OpenAiJson.quote(stopReason) : "null") + ",\"stop_sequence\":null,\"usage\":"
				+ usage(outputTokens) + "}";
	}

	String usage(int outputTokens) {
		return "{\"input_tokens\":" + this.request.promptTokens() + ",\"output_tokens\":" + outputTokens + "}";
	}

	/** {@code max_tokens} when the engine stopped at the limit, else {@code end_turn}. */
	static String stopReason(TokenOutput last) {
		return "length".equals(last.finishReason()) ? "max_tokens" : "end_turn";
	}

	static String block(boolean thinking, String text) {
		return thinking ? "{\"type\":\"thinking\",\"thinking\":" + OpenAiJson.quote(text) + ",\"signature\":\"\"}"
				: "{\"type\":\"text\",\"text\":" + OpenAiJson.quote(text) + "}";
	}

	static String delta(boolean thinking, String text) {
		return thinking ? "{\"type\":\"thinking_delta\",\"thinking\":" + OpenAiJson.quote(text) + "}"
				: "{\"type\":\"text_delta\",\"text\":" + OpenAiJson.quote(text) + "}";
	}

	/** The whole message of a request that was not streamed. */
	String fullMessage(List<TokenOutput> tokens) {
		StringBuilder thinking = new StringBuilder();
		StringBuilder text = new StringBuilder();
		tokens.forEach((token) -> (this.plan.reasoning(token.index()) ? thinking : text).append(token.text()));
		List<String> blocks = new ArrayList<>(2);
		if (!thinking.isEmpty()) {
			blocks.add(block(true, thinking.toString()));
		}
		if (!text.isEmpty()) {
			blocks.add(block(false, text.toString()));
		}
		TokenOutput last = tokens.get(tokens.size() - 1);
		return message(blocks, stopReason(last), last.completionTokens());
	}

	/**
	 * An error body as vLLM's Anthropic endpoint answers before streaming:
	 * {@code {"type":"error","error":{"type":…,"message":…}}}.
	 */
	static String error(InvalidRequestException ex) {
		String type = switch (ex.status()) {
			case 400 -> "invalid_request_error";
			case 404 -> "not_found_error";
			case 503 -> "overloaded_error";
			default -> "api_error";
		};
		return "{\"type\":\"error\",\"error\":{\"type\":\"" + type + "\",\"message\":"
				+ OpenAiJson.quote(ex.getMessage()) + "}}";
	}

	/**
	 * The in-band error event's JSON, written with Python's {@code json.dumps} spacing.
	 */
	static String streamError(String message) {
		return "{\"type\": \"error\", \"error\": {\"type\": \"api_error\", \"message\": " + OpenAiJson.quote(message)
				+ "}}";
	}

}
