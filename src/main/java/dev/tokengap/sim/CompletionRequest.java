package dev.tokengap.sim;

/**
 * The parts of an OpenAI chat or text completion request (or of a responses or messages
 * request) that the simulator acts on.
 *
 * @param chat whether it came to {@code /v1/chat/completions}
 * @param promptText the text the prompt length is estimated from (also seeds the token
 * texts)
 * @param promptTokens the prompt's length in tokens
 * @param maxTokens output tokens to generate
 * @param stream whether to answer with server-sent events
 * @param includeUsage {@code stream_options.include_usage}
 * @param continuousUsage {@code stream_options.continuous_usage_stats} (only with
 * include_usage)
 * @param n choices to generate, each its own engine sequence
 * @param toolName the function a forced {@code tool_choice} ({@code "required"} or a
 * named function) calls, else {@code null}
 * @param perRequestMetrics whether the response carries vLLM's per-request
 * {@code metrics}: {@code tokengap.sim.per-request-metrics} is on and the body does not
 * say {@code "include_metrics": false}
 * @param prompts prompts in the request: several for a completions {@code prompt} given
 * as a list of strings (the simulator generates for them as one), else 1
 */
record CompletionRequest(boolean chat, String promptText, int promptTokens, int maxTokens, boolean stream,
		boolean includeUsage, boolean continuousUsage, int n, String toolName, boolean perRequestMetrics, int prompts) {

	/** A single-choice request without tools, as responses and messages requests are. */
	static CompletionRequest single(String promptText, int promptTokens, int maxTokens, boolean stream,
			boolean perRequestMetrics) {
		return new CompletionRequest(false, promptText, promptTokens, maxTokens, stream, false, false, 1, null,
				perRequestMetrics, 1);
	}

	/**
	 * Whether vLLM can attribute its timing metrics to the request: one prompt, one
	 * sequence ({@code n} 1); else it suppresses them.
	 */
	boolean metricsAttributable() {
		return this.n == 1 && this.prompts == 1;
	}

}
