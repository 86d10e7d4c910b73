package dev.tokengap.bench;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Tells a reasoning event from an answer event by the key or type it carries, as the
 * bytes of one SSE event go by: chat's {@code "reasoning":"} or
 * {@code "reasoning_content":"}, the Responses API's
 * {@code response.reasoning_text.delta} and the Messages API's {@code "thinking":"}. A
 * quote inside generated text is escaped, so a key pattern (which starts with a bare
 * quote) cannot match inside text.
 */
final class ReasoningMatcher {

	private static final byte[][] PATTERNS = { ascii("\"reasoning\":\""), ascii("\"reasoning_content\":\""),
			ascii("reasoning_text.delta\""), ascii("\"thinking\":\"") };

	private final int[] matched = new int[PATTERNS.length];

	private boolean found;

	void accept(byte b) {
		if (this.found) {
			return;
		}
		for (int p = 0; p < PATTERNS.length; p++) {
			byte[] pattern = PATTERNS[p];
			int at = this.matched[p];
			at = (pattern[at] == b) ? at + 1 : ((pattern[0] == b) ? 1 : 0);
			if (at == pattern.length) {
				this.found = true;
				return;
			}
			this.matched[p] = at;
		}
	}

	/** Whether the event so far carried a reasoning key. */
	boolean matched() {
		return this.found;
	}

	/** Starts over for the next event. */
	void reset() {
		this.found = false;
		Arrays.fill(this.matched, 0);
	}

	private static byte[] ascii(String text) {
		return text.getBytes(StandardCharsets.US_ASCII);
	}

}
