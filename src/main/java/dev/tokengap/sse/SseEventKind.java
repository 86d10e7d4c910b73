package dev.tokengap.sse;

/**
 * What one SSE event from a vLLM stream carries, as far as timing is concerned.
 */
public enum SseEventKind {

	/**
	 * Generated output: a non-empty {@code delta.content}, {@code delta.reasoning_content},
	 * {@code delta.reasoning} or {@code text}, or a non-empty {@code delta.tool_calls}.
	 */
	CONTENT,

	/**
	 * vLLM's role-only prelude per choice ({@code "delta":{"role":"assistant","content":""}}).
	 */
	PRELUDE,

	/**
	 * The {@code include_usage} chunk: a top-level {@code usage} object and no choices.
	 */
	USAGE,

	/**
	 * Any other event with data: the finish chunk, non-JSON or malformed JSON.
	 */
	OTHER,

	/**
	 * The {@code [DONE]} sentinel that ends every vLLM stream.
	 */
	DONE,

	/**
	 * An in-band error sent after the 200 status ({@code {"error":{...}}} or
	 * {@code {"object":"error",...}}).
	 */
	ERROR,

	/**
	 * A block of comments and non-data fields only.
	 */
	COMMENT;

	/**
	 * Whether this event carries generated output and so counts for time to first token
	 * and inter-token gaps.
	 * @return {@code true} for {@link #CONTENT} only
	 */
	public boolean isContent() {
		return this == CONTENT;
	}

}
