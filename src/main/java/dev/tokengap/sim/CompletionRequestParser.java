package dev.tokengap.sim;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Reads a completion request body and checks it in vLLM's order: the body's shape first
 * (400), then the model (404), then the length against max-model-len (400).
 */
final class CompletionRequestParser {

	private final SimulatorProperties properties;

	private final JsonMapper mapper;

	CompletionRequestParser(SimulatorProperties properties, JsonMapper mapper) {
		this.properties = properties;
		this.mapper = mapper;
	}

	CompletionRequest parse(String body, boolean chat) {
		JsonNode root = readObject(body);
		String promptText = chat ? PromptText.ofMessages(root.get("messages"))
				: PromptText.ofPrompt(root.get("prompt"));
		int promptTokens = chat ? estimate(promptText)
				: PromptText.promptTokens(root.get("prompt"), estimate(promptText));
		boolean stream = optionalBoolean(root, "stream", false);
		JsonNode options = root.get("stream_options");
		boolean hasOptions = options != null && !options.isNull();
		if (hasOptions && !stream) {
			throw InvalidRequestException.badRequest("Stream options can only be defined when `stream=True`.");
		}
		if (hasOptions && !options.isObject()) {
			throw InvalidRequestException.badRequest("stream_options must be an object");
		}
		boolean includeUsage = hasOptions && optionalBoolean(options, "include_usage", false);
		boolean continuousUsage = includeUsage && optionalBoolean(options, "continuous_usage_stats", false);
		optionalBoolean(root, "ignore_eos", false);
		int maxTokens = maxTokens(root, chat);
		int n = Math.max(1, optionalPositiveInt(root, "n"));
		String toolName = chat ? ToolChoice.forcedName(root) : null;
		checkModel(root.get("model"));
		checkLength(promptTokens, maxTokens);
		int prompts = chat ? 1 : PromptText.prompts(root.get("prompt"));
		return new CompletionRequest(chat, promptText, promptTokens, maxTokens, stream, includeUsage, continuousUsage,
				n, toolName, perRequestMetrics(root), prompts);
	}

	/**
	 * A {@code /v1/responses} request: {@code input} (a string or a list of messages),
	 * {@code instructions}, {@code max_output_tokens}, {@code stream}.
	 */
	CompletionRequest parseResponses(JsonNode root) {
		String promptText = root.path("instructions").asString("") + PromptText.ofInput(root.get("input"));
		int maxTokens = optionalPositiveInt(root, "max_output_tokens");
		return single(root, promptText, (maxTokens > 0) ? maxTokens : this.properties.defaultMaxTokens(),
				perRequestMetrics(root));
	}

	/**
	 * A {@code /v1/messages} request: {@code system}, {@code messages},
	 * {@code max_tokens} (required, as Anthropic's), {@code stream}.
	 */
	CompletionRequest parseMessages(JsonNode root) {
		String promptText = PromptText.ofSystem(root.get("system")) + PromptText.ofMessages(root.get("messages"));
		int maxTokens = optionalPositiveInt(root, "max_tokens");
		if (maxTokens == 0) {
			throw InvalidRequestException.badRequest("Field required: max_tokens");
		}
		// vLLM's per-request metrics are not on its messages endpoint.
		return single(root, promptText, maxTokens, false);
	}

	private CompletionRequest single(JsonNode root, String promptText, int maxTokens, boolean perRequestMetrics) {
		int promptTokens = estimate(promptText);
		boolean stream = optionalBoolean(root, "stream", false);
		checkModel(root.get("model"));
		checkLength(promptTokens, maxTokens);
		return CompletionRequest.single(promptText, promptTokens, maxTokens, stream, perRequestMetrics);
	}

	/**
	 * The server flag, unless the body says {@code "include_metrics": false} (a gate some
	 * vLLM builds have); any other value of the field, or none, leaves it to the flag.
	 */
	private boolean perRequestMetrics(JsonNode root) {
		JsonNode include = root.get("include_metrics");
		boolean excluded = include != null && include.isBoolean() && !include.booleanValue();
		return this.properties.perRequestMetrics() && !excluded;
	}

	JsonNode readObject(String body) {
		JsonNode root;
		try {
			root = this.mapper.readTree(body);
		}
		catch (JacksonException ex) {
			throw InvalidRequestException.badRequest("JSON decode error: " + ex.getOriginalMessage());
		}
		if (root == null || !root.isObject()) {
			throw InvalidRequestException.badRequest("The request body must be a JSON object");
		}
		return root;
	}

	private int estimate(String text) {
		return Math.max(1, text.length() / this.properties.charsPerToken());
	}

	private int maxTokens(JsonNode root, boolean chat) {
		int maxCompletionTokens = chat ? optionalPositiveInt(root, "max_completion_tokens") : 0;
		int maxTokens = optionalPositiveInt(root, "max_tokens");
		if (maxCompletionTokens > 0) {
			return maxCompletionTokens;
		}
		return (maxTokens > 0) ? maxTokens : this.properties.defaultMaxTokens();
	}

	private void checkModel(JsonNode model) {
		if (model == null || model.isNull()) {
			return;
		}
		if (!model.isString()) {
			throw InvalidRequestException.badRequest("model must be a string");
		}
		if (!this.properties.serves(model.stringValue())) {
			throw InvalidRequestException.unknownModel(model.stringValue());
		}
	}

	private void checkLength(int promptTokens, int maxTokens) {
		int limit = this.properties.maxModelLen();
		if (promptTokens >= limit) {
			throw InvalidRequestException
				.badRequest("This model's maximum context length is " + limit + " tokens. However, your request has "
						+ promptTokens + " input tokens. Please reduce the length of the input messages.");
		}
		if (promptTokens + maxTokens > limit) {
			throw InvalidRequestException.badRequest("'max_tokens' or 'max_completion_tokens' is too large: "
					+ maxTokens + ". This model's maximum context length is " + limit + " tokens and your request has "
					+ promptTokens + " input tokens (" + maxTokens + " > " + limit + " - " + promptTokens + ").");
		}
	}

	private static boolean optionalBoolean(JsonNode object, String field, boolean fallback) {
		JsonNode node = object.get(field);
		if (node == null || node.isNull()) {
			return fallback;
		}
		if (!node.isBoolean()) {
			throw InvalidRequestException.badRequest(field + " must be a boolean");
		}
		return node.booleanValue();
	}

	/** The field's value, or 0 when absent. */
	private static int optionalPositiveInt(JsonNode object, String field) {
		JsonNode node = object.get(field);
		if (node == null || node.isNull()) {
			return 0;
		}
		if (!node.isIntegralNumber() || !node.canConvertToInt()) {
			throw InvalidRequestException.badRequest(field + " must be an integer");
		}
		if (node.intValue() < 1) {
			throw InvalidRequestException.badRequest(field + " must be at least 1, got " + node.intValue() + ".");
		}
		return node.intValue();
	}

}
