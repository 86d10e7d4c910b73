package dev.tokengap.sim;

/**
 * What each output token of a request stands for: its leading reasoning tokens, then
 * content, or the arguments of the one tool call a forced {@code tool_choice} asks for.
 *
 * @param reasoningTokens how many leading tokens are reasoning
 * @param toolName the function called, or {@code null} for text content
 */
record ContentPlan(int reasoningTokens, String toolName) {

	static ContentPlan of(CompletionRequest call, FaultHeaders faults, SimulatorProperties properties) {
		int reasoning = (faults.reasoningTokens() >= 0) ? faults.reasoningTokens()
				: (int) (properties.reasoningShare() * call.maxTokens());
		// A forced tool call keeps at least one token for its arguments.
		int limit = (call.toolName() != null) ? call.maxTokens() - 1 : call.maxTokens();
		return new ContentPlan(Math.min(reasoning, limit), call.toolName());
	}

	boolean reasoning(int index) {
		return index < this.reasoningTokens;
	}

	boolean calls() {
		return this.toolName != null;
	}

	/** Whether this token opens the tool call's arguments. */
	boolean firstArgument(int index) {
		return calls() && index == this.reasoningTokens;
	}

	String finishReason(TokenOutput last) {
		return calls() ? "tool_calls" : last.finishReason();
	}

	/**
	 * The token's fragment of the call's arguments, which all together read
	 * {@code {"input": "<texts>"}}.
	 */
	String argumentsFragment(TokenOutput token) {
		String text = OpenAiJson.quote(token.text());
		text = text.substring(1, text.length() - 1);
		return (firstArgument(token.index()) ? "{\"input\": \"" : "") + text + (token.last() ? "\"}" : "");
	}

}
