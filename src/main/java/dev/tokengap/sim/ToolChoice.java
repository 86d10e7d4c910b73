package dev.tokengap.sim;

import tools.jackson.databind.JsonNode;

/**
 * Reads a chat request's {@code tools} and {@code tool_choice}: the function vLLM is
 * forced to call ({@code "required"}: the first tool; a named function: that one), or
 * none ({@code "auto"}, {@code "none"}, absent: the simulator answers with text).
 */
final class ToolChoice {

	private ToolChoice() {
	}

	static String forcedName(JsonNode root) {
		JsonNode choice = root.get("tool_choice");
		if (choice == null || choice.isNull() || choice.isString() && !"required".equals(choice.stringValue())) {
			return null;
		}
		JsonNode tools = root.path("tools");
		if (!tools.isArray() || tools.isEmpty()) {
			throw InvalidRequestException.badRequest("When using `tool_choice`, `tools` must be set.");
		}
		if ("required".equals(choice.asString(""))) {
			return nameOf(tools.get(0));
		}
		String named = choice.path("function").path("name").asString("");
		for (JsonNode tool : tools) {
			if (named.equals(nameOf(tool))) {
				return named;
			}
		}
		throw InvalidRequestException
			.badRequest("The tool specified in `tool_choice` does not match any of the specified `tools`");
	}

	private static String nameOf(JsonNode tool) {
		JsonNode name = tool.path("function").path("name");
		if (!name.isString() || name.stringValue().isEmpty()) {
			throw InvalidRequestException.badRequest("Each tool needs a function with a name");
		}
		return name.stringValue();
	}

}
