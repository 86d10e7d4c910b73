package dev.tokengap.sim;

/**
 * One output of the engine for one request: the token produced in a step, with the
 * request's running counts so the HTTP layer can write usage without asking the engine.
 *
 * @param index 0-based position of the token in the output
 * @param text the token's text
 * @param finishReason {@code "length"} on the last token, else {@code null}
 * @param promptTokens the request's prompt tokens
 * @param completionTokens output tokens so far, this one included
 * @param timings the sequence's engine timestamps on its last output, else {@code null}
 */
record TokenOutput(int index, String text, String finishReason, int promptTokens, int completionTokens,
		RequestTimings timings) {

	boolean last() {
		return this.finishReason != null;
	}

}
