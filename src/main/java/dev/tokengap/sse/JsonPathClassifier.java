package dev.tokengap.sse;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Follows the few JSON paths of a streamed event that decide its {@link SseEventKind},
 * from the structure a {@link JsonTokenizer} reports, for every stream shape vLLM serves
 * (chat and text completions, audio, the Responses API, the Messages API). Only this tree
 * of containers is tracked; anything else is an unknown subtree that is just counted in
 * and out: <pre>
 * (document) --> {root} --> "choices": [ ] --> element { } --> "delta": { } --> "tool_calls": [ ]
 *                   |----> "usage": { }                       (completion_tokens, output_tokens)
 *                   |----> "metrics": { }                     (vLLM's per-request metrics)
 *                   |----> "delta": { }                       (Messages: text, thinking, partial_json)
 *                   '----> "response": { } --> "usage": { }   (Responses: output_tokens)
 *                                          '-> "metrics": { } (Responses: per-request metrics)
 * </pre> Keys are matched only inside a tracked container, so {@code logprobs.content} or
 * a {@code text} key deeper in a choice never counts. Scalars that need the event type
 * (the Responses API's root {@code delta} string, the Messages API's {@code delta}
 * object) are noted while they pass, and judged in {@link #kind} once the whole event,
 * and so its root {@code type}, has been read.
 * <p>
 * The per-request metrics that vLLM sends with {@code --enable-per-request-metrics} (in
 * the final usage chunk, or in the Responses API's {@code response.completed}) are read
 * as numbers and decide no kind.
 */
final class JsonPathClassifier {

	/**
	 * Choice indexes from this one up share the last bit of {@link #contentChoices()}.
	 */
	static final int MAX_CHOICE_BIT = 63;

	private static final int CTX_DOCUMENT = 0, CTX_ROOT = 1, CTX_CHOICES = 2, CTX_CHOICE = 3, CTX_DELTA = 4,
			CTX_TOOL_CALLS = 5, CTX_USAGE = 6, CTX_BLOCK_DELTA = 7, CTX_RESPONSE = 8, CTX_RESPONSE_USAGE = 9,
			CTX_METRICS = 10, CTX_RESPONSE_METRICS = 11;

	private static final int[] PARENT = { CTX_DOCUMENT, CTX_DOCUMENT, CTX_ROOT, CTX_CHOICES, CTX_CHOICE, CTX_DELTA,
			CTX_ROOT, CTX_ROOT, CTX_ROOT, CTX_RESPONSE, CTX_ROOT, CTX_RESPONSE };

	// Keys, grouped by the context they are looked up in; since a key is only known
	// within its own context, a key also says what a value means. Ids above the keys name
	// array elements and the root.
	private static final int UNKNOWN = 0, ERROR = 1, OBJECT = 2, CHOICES = 3, USAGE = 4, TYPE = 5, ROOT_DELTA = 6,
			RESPONSE = 7, METRICS = 8, DELTA = 9, TEXT = 10, INDEX = 11, CONTENT = 12, REASONING_CONTENT = 13,
			REASONING = 14, TOOL_CALLS = 15, ROLE = 16, COMPLETION_TOKENS = 17, OUTPUT_TOKENS = 18, BLOCK_TEXT = 19,
			THINKING = 20, PARTIAL_JSON = 21, RESPONSE_USAGE = 22, RESPONSE_METRICS = 23, QUEUE_TIME = 24,
			FIRST_TOKEN_TIME = 25, GENERATION_TIME = 26, MEAN_ITL = 27, PREEMPTIONS = 28, ROOT_VALUE = 29, CHOICE = 30,
			TOOL_CALL = 31;

	/** The first and last key id looked up in each context (none where first > last). */
	private static final int[][] KEYS_IN = { { 1, 0 }, { ERROR, METRICS }, { 1, 0 }, { DELTA, INDEX },
			{ CONTENT, ROLE }, { 1, 0 }, { COMPLETION_TOKENS, OUTPUT_TOKENS }, { BLOCK_TEXT, PARTIAL_JSON },
			{ RESPONSE_USAGE, RESPONSE_METRICS }, { COMPLETION_TOKENS, OUTPUT_TOKENS }, { QUEUE_TIME, PREEMPTIONS },
			{ QUEUE_TIME, PREEMPTIONS } };

	private static final byte[][] KEY_NAMES = names("", "error", "object", "choices", "usage", "type", "delta",
			"response", "metrics", "delta", "text", "index", "content", "reasoning_content", "reasoning", "tool_calls",
			"role", "completion_tokens", "output_tokens", "text", "thinking", "partial_json", "usage", "metrics",
			"queue_time_ms", "time_to_first_token_ms", "generation_time_ms", "mean_itl_ms", "num_preemptions");

	/** The longest key name. */
	private static final int MAX_KEY_LENGTH = maxLength(KEY_NAMES);

	/**
	 * Per context, by key length: the first key id of that length looked up there, or
	 * {@link #UNKNOWN}; {@link #NEXT_OF_LENGTH} chains the others, so that a key is
	 * compared with the names of its own length only.
	 */
	private static final int[][] FIRST_OF_LENGTH = new int[KEYS_IN.length][MAX_KEY_LENGTH + 1];

	/** The next key id of the same length in the same context, or {@link #UNKNOWN}. */
	private static final int[] NEXT_OF_LENGTH = new int[KEY_NAMES.length];

	static {
		for (int context = 0; context < KEYS_IN.length; context++) {
			// chained from the last, so that the first id of a length comes first
			for (int candidate = KEYS_IN[context][1]; candidate >= KEYS_IN[context][0]; candidate--) {
				int length = KEY_NAMES[candidate].length;
				NEXT_OF_LENGTH[candidate] = FIRST_OF_LENGTH[context][length];
				FIRST_OF_LENGTH[context][length] = candidate;
			}
		}
	}

	private static final byte[] ERROR_VALUE = KEY_NAMES[ERROR];

	private static final byte[] RESPONSE_FAILED = ascii("response.failed");

	private static final byte[] RESPONSE_COMPLETED = ascii("response.completed");

	private static final byte[] RESPONSE_INCOMPLETE = ascii("response.incomplete");

	private static final byte[] MESSAGE_STOP = ascii("message_stop");

	private static final byte[] CONTENT_BLOCK_DELTA = ascii("content_block_delta");

	private static final byte[] RESPONSE_PREFIX = ascii("response.");

	private static final byte[] DELTA_SUFFIX = ascii(".delta");

	private final byte[] type = new byte[JsonStringReader.MAX_TEXT];

	private int typeLength;

	private int context;

	/** Open containers below the deepest tracked one. */
	private int unknownDepth;

	private int key;

	private int scalar;

	private boolean error;

	private boolean role;

	private boolean usage;

	/** A non-empty root {@code delta} string (Responses API deltas). */
	private boolean rootDelta;

	/**
	 * A non-empty text, thinking or partial JSON in a root {@code delta} object (Messages
	 * API).
	 */
	private boolean blockDelta;

	private int choices;

	private long contentChoices;

	private int choiceIndex;

	private boolean choiceContent;

	private int lastChoiceIndex;

	private long outputTokens;

	/**
	 * A number was read at a metrics field; until then the fields keep their absent
	 * values.
	 */
	private boolean metricsRead;

	private double queueMs = Double.NaN;

	private double firstTokenMs = Double.NaN;

	private double generationMs = Double.NaN;

	private double meanItlMs = Double.NaN;

	private long preemptions = -1;

	JsonPathClassifier() {
		reset();
	}

	/** Takes on another classifier's state, as if it had followed what that one did. */
	void copyFrom(JsonPathClassifier other) {
		System.arraycopy(other.type, 0, this.type, 0, this.type.length);
		this.typeLength = other.typeLength;
		this.context = other.context;
		this.unknownDepth = other.unknownDepth;
		this.key = other.key;
		this.scalar = other.scalar;
		this.error = other.error;
		this.role = other.role;
		this.usage = other.usage;
		this.rootDelta = other.rootDelta;
		this.blockDelta = other.blockDelta;
		this.choices = other.choices;
		this.contentChoices = other.contentChoices;
		this.choiceIndex = other.choiceIndex;
		this.choiceContent = other.choiceContent;
		this.lastChoiceIndex = other.lastChoiceIndex;
		this.outputTokens = other.outputTokens;
		this.metricsRead = other.metricsRead;
		this.queueMs = other.queueMs;
		this.firstTokenMs = other.firstTokenMs;
		this.generationMs = other.generationMs;
		this.meanItlMs = other.meanItlMs;
		this.preemptions = other.preemptions;
	}

	void reset() {
		this.context = CTX_DOCUMENT;
		this.unknownDepth = 0;
		this.key = UNKNOWN;
		this.scalar = UNKNOWN;
		this.typeLength = 0;
		this.error = false;
		this.role = false;
		this.usage = false;
		this.rootDelta = false;
		this.blockDelta = false;
		this.choices = 0;
		this.contentChoices = 0;
		this.lastChoiceIndex = -1;
		this.outputTokens = -1;
		if (this.metricsRead) {
			forgetMetrics();
		}
	}

	/**
	 * The kind of a complete, well-formed event; the caller decides that it is one.
	 * @param eventType the event's {@code event:} field value, or null to use the JSON's
	 * root {@code type}
	 * @param eventTypeLength its length ({@code MAX_TEXT + 1} when longer than kept)
	 */
	SseEventKind kind(byte[] eventType, int eventTypeLength) {
		byte[] t = (eventType != null) ? eventType : this.type;
		int length = (eventType != null) ? eventTypeLength : this.typeLength;
		if (this.error || matches(t, length, ERROR_VALUE) || matches(t, length, RESPONSE_FAILED)) {
			return SseEventKind.ERROR;
		}
		if (matches(t, length, RESPONSE_COMPLETED) || matches(t, length, RESPONSE_INCOMPLETE)
				|| matches(t, length, MESSAGE_STOP)) {
			return SseEventKind.DONE;
		}
		if (this.contentChoices != 0) {
			return SseEventKind.CONTENT;
		}
		if ((this.rootDelta && isResponsesDelta(t, length))
				|| (this.blockDelta && matches(t, length, CONTENT_BLOCK_DELTA))) {
			this.contentChoices = 1;
			return SseEventKind.CONTENT;
		}
		if (this.role) {
			return SseEventKind.PRELUDE;
		}
		return (this.usage && this.choices == 0) ? SseEventKind.USAGE : SseEventKind.OTHER;
	}

	/**
	 * Which choices carried content: bit {@code i} for choice index {@code i}, indexes
	 * from {@value #MAX_CHOICE_BIT} up on the last bit; bit 0 for shapes without choices.
	 */
	long contentChoices() {
		return this.contentChoices;
	}

	/**
	 * The output token count the event carried ({@code usage.completion_tokens},
	 * {@code usage.output_tokens} or {@code response.usage.output_tokens}) when it was a
	 * non-negative integer, else -1.
	 */
	long outputTokens() {
		return this.outputTokens;
	}

	/**
	 * The choice the output token count belongs to: the index of the event's only choice,
	 * or -1 when the event had no choice or several (a count for the whole stream).
	 */
	int tokensChoice() {
		return (this.choices == 1) ? this.lastChoiceIndex : -1;
	}

	/**
	 * Whether a per-request {@code metrics} object at the root or in the root
	 * {@code response} gave a value for at least one of the fields below.
	 */
	boolean engineMetrics() {
		return this.metricsRead && (!Double.isNaN(this.queueMs) || !Double.isNaN(this.firstTokenMs)
				|| !Double.isNaN(this.generationMs) || !Double.isNaN(this.meanItlMs) || this.preemptions >= 0);
	}

	/** {@code metrics.queue_time_ms}, or NaN when absent, null or not a finite number. */
	double queueMs() {
		return this.queueMs;
	}

	/**
	 * {@code metrics.time_to_first_token_ms}, or NaN when absent, null or not a finite
	 * number.
	 */
	double firstTokenMs() {
		return this.firstTokenMs;
	}

	/**
	 * {@code metrics.generation_time_ms}, or NaN when absent, null or not a finite
	 * number.
	 */
	double generationMs() {
		return this.generationMs;
	}

	/** {@code metrics.mean_itl_ms}, or NaN when absent, null or not a finite number. */
	double meanItlMs() {
		return this.meanItlMs;
	}

	/** {@code metrics.num_preemptions}, or -1 unless it was a non-negative integer. */
	long preemptions() {
		return this.preemptions;
	}

	void key(byte[] text, int length) {
		this.key = (this.unknownDepth == 0) ? lookUp(text, length) : UNKNOWN;
	}

	/**
	 * A value starts; {@code first} is its first byte, so an opening brace or bracket
	 * opens a container and {@code 'n'} starts a null.
	 */
	void valueStart(byte first) {
		int meaning = meaning();
		switch (meaning) {
			case ERROR -> this.error |= first != 'n';
			case ROLE -> this.role = true;
			case CHOICE -> startChoice();
			case TOOL_CALL -> this.choiceContent = true;
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
			case TEXT, CONTENT, REASONING_CONTENT, REASONING -> this.choiceContent |= !empty;
			case ROOT_DELTA -> this.rootDelta |= !empty;
			case BLOCK_TEXT, THINKING, PARTIAL_JSON -> this.blockDelta |= !empty;
			case OBJECT -> this.error |= matches(text, length, ERROR_VALUE);
			case TYPE -> {
				this.typeLength = length;
				System.arraycopy(text, 0, this.type, 0, Math.min(length, this.type.length));
			}
			default -> {
				// not a string that matters
			}
		}
	}

	/**
	 * A number ended; its value is only computed for a scalar that needs it (a key's last
	 * number wins).
	 */
	void numberEnd(JsonNumberReader number) {
		switch (this.scalar) {
			case COMPLETION_TOKENS, OUTPUT_TOKENS -> this.outputTokens = number.integerValue();
			case INDEX -> index(number.integerValue());
			case QUEUE_TIME -> this.queueMs = metric(number);
			case FIRST_TOKEN_TIME -> this.firstTokenMs = metric(number);
			case GENERATION_TIME -> this.generationMs = metric(number);
			case MEAN_ITL -> this.meanItlMs = metric(number);
			case PREEMPTIONS -> {
				this.metricsRead = true;
				this.preemptions = number.integerValue();
			}
			default -> {
				// not a number that matters
			}
		}
	}

	void containerEnd() {
		if (this.unknownDepth > 0) {
			this.unknownDepth--;
			return;
		}
		if (this.context == CTX_CHOICE) {
			endChoice();
		}
		this.context = PARENT[this.context];
	}

	private void index(long integer) {
		if (integer >= 0) {
			this.choiceIndex = (int) Math.min(integer, Integer.MAX_VALUE);
		}
	}

	/** A metric in milliseconds; a number too large for a double is none. */
	private double metric(JsonNumberReader number) {
		this.metricsRead = true;
		double value = number.doubleValue();
		return Double.isFinite(value) ? value : Double.NaN;
	}

	/** Only after an event that had metrics: the events without them cost no stores. */
	private void forgetMetrics() {
		this.metricsRead = false;
		this.queueMs = Double.NaN;
		this.firstTokenMs = Double.NaN;
		this.generationMs = Double.NaN;
		this.meanItlMs = Double.NaN;
		this.preemptions = -1;
	}

	private void startChoice() {
		this.choices++;
		this.choiceIndex = 0;
		this.choiceContent = false;
	}

	private void endChoice() {
		this.lastChoiceIndex = this.choiceIndex;
		if (this.choiceContent) {
			this.contentChoices |= 1L << Math.min(this.choiceIndex, MAX_CHOICE_BIT);
		}
	}

	private int meaning() {
		if (this.unknownDepth > 0) {
			return UNKNOWN;
		}
		return switch (this.context) {
			case CTX_DOCUMENT -> ROOT_VALUE;
			case CTX_CHOICES -> CHOICE;
			case CTX_TOOL_CALLS -> TOOL_CALL;
			default -> this.key;
		};
	}

	private static int child(int meaning, boolean object) {
		if (object) {
			return switch (meaning) {
				case ROOT_VALUE -> CTX_ROOT;
				case CHOICE -> CTX_CHOICE;
				case DELTA -> CTX_DELTA;
				case USAGE -> CTX_USAGE;
				case ROOT_DELTA -> CTX_BLOCK_DELTA;
				case RESPONSE -> CTX_RESPONSE;
				case RESPONSE_USAGE -> CTX_RESPONSE_USAGE;
				case METRICS -> CTX_METRICS;
				case RESPONSE_METRICS -> CTX_RESPONSE_METRICS;
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
		if (length > MAX_KEY_LENGTH) {
			return UNKNOWN;
		}
		for (int candidate = FIRST_OF_LENGTH[this.context][length]; candidate != UNKNOWN; candidate = NEXT_OF_LENGTH[candidate]) {
			if (matches(text, length, KEY_NAMES[candidate])) {
				return candidate;
			}
		}
		return UNKNOWN;
	}

	/** {@code response.<anything>.delta}, when the whole type was kept. */
	private static boolean isResponsesDelta(byte[] type, int length) {
		int prefix = RESPONSE_PREFIX.length;
		int suffix = DELTA_SUFFIX.length;
		return length > prefix + suffix && length <= type.length
				&& Arrays.equals(type, 0, prefix, RESPONSE_PREFIX, 0, prefix)
				&& Arrays.equals(type, length - suffix, length, DELTA_SUFFIX, 0, suffix);
	}

	/**
	 * Whether a captured string equals {@code name}; {@code length} may exceed the
	 * capture buffer.
	 */
	private static boolean matches(byte[] text, int length, byte[] name) {
		if (length != name.length) {
			return false;
		}
		// names are short: a plain loop beats the range checks of Arrays.equals
		// (SseScannerBenchmark, alternated: 942-945 ns against 1,014-1,039 per Responses
		// delta)
		for (int i = 0; i < length; i++) {
			if (text[i] != name[i]) {
				return false;
			}
		}
		return true;
	}

	private static byte[] ascii(String name) {
		return name.getBytes(StandardCharsets.US_ASCII);
	}

	private static int maxLength(byte[][] names) {
		int longest = 0;
		for (byte[] name : names) {
			longest = Math.max(longest, name.length);
		}
		return longest;
	}

	private static byte[][] names(String... names) {
		byte[][] bytes = new byte[names.length][];
		for (int i = 0; i < names.length; i++) {
			bytes[i] = ascii(names[i]);
		}
		return bytes;
	}

}
