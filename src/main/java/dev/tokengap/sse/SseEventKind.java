package dev.tokengap.sse;

/**
 * What one SSE event from a vLLM stream carries, as far as timing is concerned, for every
 * stream shape of the metrics contract (chat and text completions, audio, the Responses
 * API, the Messages API).
 */
public enum SseEventKind {

	/**
	 * Generated output: a choice with a non-empty {@code delta.content},
	 * {@code delta.reasoning_content}, {@code delta.reasoning} or {@code text}, or a
	 * non-empty {@code delta.tool_calls}; a {@code response.*.delta} event with a
	 * non-empty {@code delta}; a {@code content_block_delta} whose delta has a non-empty
	 * {@code text}, {@code thinking} or {@code partial_json}.
	 */
	CONTENT,

	/**
	 * vLLM's role-only prelude per choice
	 * ({@code "delta":{"role":"assistant","content":""}}).
	 */
	PRELUDE,

	/**
	 * The {@code include_usage} chunk: a top-level {@code usage} object and no choices.
	 */
	USAGE,

	/**
	 * Any other event with data: the finish chunk, {@code response.created},
	 * {@code message_start}, {@code *.done} events, non-JSON or malformed JSON.
	 */
	OTHER,

	/**
	 * The good end of a stream: the {@code [DONE]} sentinel (chat, completions, audio),
	 * {@code response.completed} or {@code response.incomplete} (Responses API),
	 * {@code message_stop} (Messages API).
	 */
	DONE,

	/**
	 * An in-band failure sent after the 200 status: a root {@code error}
	 * ({@code {"error":{...}}}), {@code {"object":"error",...}}, or an event of type
	 * {@code error} or {@code response.failed}.
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
