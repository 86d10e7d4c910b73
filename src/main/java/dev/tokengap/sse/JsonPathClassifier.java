package dev.tokengap.sse;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Follows the few JSON paths of a vLLM chunk that decide its {@link SseEventKind}, from the
 * structure a {@link JsonTokenizer} reports. Only this chain of containers is tracked; anything
 * else is an unknown subtree that is just counted in and out:
 * <pre>
 * (document) --> {root} --> "choices": [ ] --> element { } --> "delta": { } --> "tool_calls": [ ]
 *                   '----> "usage": { }
 * </pre>
 * Keys are matched only inside a tracked container, so {@code logprobs.content} or a {@code text}
 * key deeper in a choice never counts.
 */
final class JsonPathClassifier {

	private static final int CTX_DOCUMENT = 0, CTX_ROOT = 1, CTX_CHOICES = 2, CTX_CHOICE = 3, CTX_DELTA = 4,
			CTX_TOOL_CALLS = 5, CTX_USAGE = 6;

	private static final int[] PARENT = { CTX_DOCUMENT, CTX_DOCUMENT, CTX_ROOT, CTX_CHOICES, CTX_CHOICE,
			CTX_DELTA, CTX_ROOT };

	// Keys, grouped by the context they are looked up in; since a key is only known within its own
	// context, a key also says what a value means. Ids above the keys name array elements and the root.
	private static final int UNKNOWN = 0, ERROR = 1, OBJECT = 2, CHOICES = 3, USAGE = 4, DELTA = 5, TEXT = 6,
			CONTENT = 7, REASONING_CONTENT = 8, REASONING = 9, TOOL_CALLS = 10, ROLE = 11, COMPLETION_TOKENS = 12,
			ROOT = 13, CHOICE = 14, TOOL_CALL = 15;

	private static final byte[][] KEY_NAMES = names("", "error", "object", "choices", "usage", "delta", "text",
			"content", "reasoning_content", "reasoning", "tool_calls", "role", "completion_tokens");

	private static final byte[] ERROR_VALUE = KEY_NAMES[ERROR];

	private int context;

	/** Open containers below the deepest tracked one. */
	private int unknownDepth;

	private int key;

	private int scalar;

	private boolean error;

	private boolean content;

	private boolean role;

	private boolean choices;

	private boolean usage;

	private long completionTokens;

	JsonPathClassifier() {
		reset();
	}

	void reset() {
		this.context = CTX_DOCUMENT;
		this.unknownDepth = 0;
		this.key = UNKNOWN;
		this.scalar = UNKNOWN;
		this.error = false;
		this.content = false;
		this.role = false;
		this.choices = false;
		this.usage = false;
		this.completionTokens = -1;
	}

	/**
	 * The kind of a complete, well-formed chunk; the caller decides that it is one.
	 */
	SseEventKind kind() {
		if (this.error) {
			return SseEventKind.ERROR;
		}
		if (this.content) {
			return SseEventKind.CONTENT;
		}
		if (this.role) {
			return SseEventKind.PRELUDE;
		}
		return (this.usage && !this.choices) ? SseEventKind.USAGE : SseEventKind.OTHER;
	}

	/**
	 * Top-level {@code usage.completion_tokens} when it was a non-negative integer, else -1.
	 */
	long completionTokens() {
		return this.completionTokens;
	}

	void key(byte[] text, int length) {
		this.key = (this.unknownDepth == 0) ? lookUp(text, length) : UNKNOWN;
	}

	/**
	 * A value starts; {@code first} is its first byte, so an opening brace or bracket opens a
	 * container and {@code 'n'} starts a null.
	 */
	void valueStart(byte first) {
		int meaning = meaning();
		switch (meaning) {
			case ERROR -> this.error |= first != 'n';
			case ROLE -> this.role = true;
			case CHOICE -> this.choices = true;
			case TOOL_CALL -> this.content = true;
			case USAGE -> this.usage |= first == '{';
			default -> {
				// decided when the value ends, or not at all
			}
		}
		if (first == '{' || first == '[') {
			int child = child(meaning, first == '{');
			if (child == CTX_DOCUMENT) {
				this.unknownDepth++;
			}
			else {
				this.context = child;
			}
		}
		else {
			this.scalar = meaning;
		}
	}

	void stringEnd(boolean empty, byte[] text, int length) {
		switch (this.scalar) {
			case TEXT, CONTENT, REASONING_CONTENT, REASONING -> this.content |= !empty;
			case OBJECT -> this.error |= matches(text, length, ERROR_VALUE);
			default -> {
				// not a string that matters
			}
		}
	}

	void numberEnd(long integer) {
		if (this.scalar == COMPLETION_TOKENS) {
			this.completionTokens = integer;
		}
	}

	void containerEnd() {
		if (this.unknownDepth > 0) {
			this.unknownDepth--;
		}
		else {
			this.context = PARENT[this.context];
		}
	}

	private int meaning() {
		if (this.unknownDepth > 0) {
			return UNKNOWN;
		}
		return switch (this.context) {
			case CTX_DOCUMENT -> ROOT;
			case CTX_CHOICES -> CHOICE;
			case CTX_TOOL_CALLS -> TOOL_CALL;
			default -> this.key;
		};
	}

	private static int child(int meaning, boolean object) {
		if (object) {
			return switch (meaning) {
				case ROOT -> CTX_ROOT;
				case CHOICE -> CTX_CHOICE;
				case DELTA -> CTX_DELTA;
				case USAGE -> CTX_USAGE;
				default -> CTX_DOCUMENT;
			};
		}
		return switch (meaning) {
			case CHOICES -> CTX_CHOICES;
			case TOOL_CALLS -> CTX_TOOL_CALLS;
			default -> CTX_DOCUMENT;
		};
	}

	private int lookUp(byte[] text, int length) {
		int first;
		int last;
		switch (this.context) {
			case CTX_ROOT -> {
				first = ERROR;
				last = USAGE;
			}
			case CTX_CHOICE -> {
				first = DELTA;
				last = TEXT;
			}
			case CTX_DELTA -> {
				first = CONTENT;
				last = ROLE;
			}
			case CTX_USAGE -> {
				first = COMPLETION_TOKENS;
				last = COMPLETION_TOKENS;
			}
			default -> {
				return UNKNOWN;
			}
		}
		for (int candidate = first; candidate <= last; candidate++) {
			if (matches(text, length, KEY_NAMES[candidate])) {
				return candidate;
			}
		}
		return UNKNOWN;
	}

	/**
	 * Whether a captured string equals {@code name}; {@code length} may exceed the capture buffer.
	 */
	private static boolean matches(byte[] text, int length, byte[] name) {
		return length == name.length && Arrays.equals(text, 0, length, name, 0, length);
	}

	private static byte[][] names(String... names) {
		byte[][] bytes = new byte[names.length][];
		for (int i = 0; i < names.length; i++) {
			bytes[i] = names[i].getBytes(StandardCharsets.US_ASCII);
		}
		return bytes;
	}

}
