package dev.tokengap.sim;

import tools.jackson.databind.JsonNode;

/**
 * The text of a request's prompt: chat message contents joined, or a completion prompt
 * given as a string, a list of strings, or token ids.
 */
final class PromptText {

	private PromptText() {
	}

	static String ofMessages(JsonNode messages) {
		if (messages == null || !messages.isArray() || messages.isEmpty()) {
			throw InvalidRequestException.badRequest("Field required: messages (a non-empty list)");
		}
		StringBuilder text = new StringBuilder();
		for (JsonNode message : messages) {
			if (!message.isObject() || !message.path("role").isString()) {
				throw InvalidRequestException.badRequest("Each message needs a string role");
			}
			appendContent(text, message.get("content"));
		}
		return text.toString();
	}

	private static void appendContent(StringBuilder text, JsonNode content) {
		if (content == null || content.isNull()) {
			return;
		}
		if (content.isString()) {
			text.append(content.stringValue());
			return;
		}
		if (!content.isArray()) {
			throw InvalidRequestException.badRequest("Message content must be a string or a list of parts");
		}
		for (JsonNode part : content) {
			JsonNode partText = part.path("text");
			if (partText.isString()) {
				text.append(partText.stringValue());
			}
		}
	}

	/**
	 * A responses {@code input}: a string, or a list of input items whose contents are
	 * joined.
	 */
	static String ofInput(JsonNode input) {
		if (input == null || input.isNull()) {
			throw InvalidRequestException.badRequest("Field required: input");
		}
		if (input.isString()) {
			return input.stringValue();
		}
		if (!input.isArray() || input.isEmpty()) {
			throw InvalidRequestException.badRequest("input must be a string or a non-empty list of items");
		}
		StringBuilder text = new StringBuilder();
		for (JsonNode item : input) {
			if (!item.isObject()) {
				throw InvalidRequestException.badRequest("Each input item must be an object");
			}
			appendContent(text, item.get("content"));
		}
		return text.toString();
	}

	/** An Anthropic {@code system}: absent, a string, or a list of text blocks. */
	static String ofSystem(JsonNode system) {
		StringBuilder text = new StringBuilder();
		appendContent(text, system);
		return text.toString();
	}

	static String ofPrompt(JsonNode prompt) {
		if (prompt == null || prompt.isNull()) {
			throw InvalidRequestException.badRequest("Field required: prompt");
		}
		if (prompt.isString()) {
			return prompt.stringValue();
		}
		if (!prompt.isArray() || prompt.isEmpty()) {
			throw InvalidRequestException.badRequest("prompt must be a string, a list of strings or token ids");
		}
		StringBuilder text = new StringBuilder();
		for (JsonNode element : prompt) {
			if (element.isString()) {
				text.append(element.stringValue());
			}
			else if (element.isIntegralNumber()) {
				text.append(element.asString()).append(' ');
			}
			else {
				throw InvalidRequestException.badRequest("prompt must be a string, a list of strings or token ids");
			}
		}
		return text.toString();
	}

	/** Prompts in a completions {@code prompt}: each string of a list is one. */
	static int prompts(JsonNode prompt) {
		return (prompt.isArray() && prompt.get(0).isString()) ? prompt.size() : 1;
	}

	/** Token ids count as themselves; text is estimated. */
	static int promptTokens(JsonNode prompt, int estimated) {
		if (prompt.isArray() && prompt.get(0).isIntegralNumber()) {
			return prompt.size();
		}
		return estimated;
	}

}
