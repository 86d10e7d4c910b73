package dev.tokengap.sse;

import java.nio.ByteBuffer;

/**
 * Finds SSE event boundaries in a response body, fed a byte at a time or a range at a
 * time, and classifies each event, without buffering the stream and without allocating
 * after construction (it keeps copies of at most {@value EventStartMemo#MAX} bytes of an
 * event's start, to recognise the start the stream's events share).
 * <p>
 * Framing follows the WHATWG event-stream rules: lines end with CRLF, LF or CR (a CRLF
 * split across two buffers is still one terminator), a blank line dispatches the event,
 * {@code ':'} starts a comment, and one space after a field's colon is dropped. Only
 * {@code data} and {@code event} values are looked at: data lines are joined with
 * {@code '\n'} and classified as they pass by a bounded-state JSON tokenizer; the first
 * {@value JsonStringReader#MAX_TEXT} bytes of the event type are kept (the Responses and
 * Messages APIs name each event's type there, and in the JSON's root {@code type}). <pre>
 * LINE_START --':'--> SKIP_LINE                          (a comment)
 *     | other byte
 *     v
 * FIELD_NAME --':' after any other name--> SKIP_LINE     (id:, retry:, ...)
 *     | ':' after "data"                 | ':' after "event"
 *     v                                  v
 * DATA_START --one optional ' '-->    EVENT_START --one optional ' '--> EVENT_VALUE (kept, bounded)
 *   DATA_VALUE                        (bytes go to the JSON tokenizer and the [DONE] match)
 *
 * CR, LF or CRLF in any state --> LINE_START; one that ends an empty line dispatches the event
 * </pre> An event is reported on the byte that ends its blank line; with CRLF that is the
 * CR, and the LF that follows is swallowed. What else the event carried (its content
 * choices, output token count and the engine's per-request metrics) can be read until the
 * next event is reported. An instance serves one stream at a time and is not thread-safe.
 */
public final class SseEventScanner {

	/** The highest choice index {@link #contentChoices()} tells apart. */
	public static final int MAX_CHOICE_BIT = JsonPathClassifier.MAX_CHOICE_BIT;

	private static final int LINE_START = 0, FIELD_NAME = 1, DATA_START = 2, DATA_VALUE = 3, SKIP_LINE = 4,
			EVENT_START = 5, EVENT_VALUE = 6;

	private static final byte[] DATA = { 'd', 'a', 't', 'a' };

	private static final byte[] EVENT = { 'e', 'v', 'e', 'n', 't' };

	private static final byte[] BOM = { (byte) 0xEF, (byte) 0xBB, (byte) 0xBF };

	private static final byte[] DONE = { '[', 'D', 'O', 'N', 'E', ']' };

	private final JsonPathClassifier paths = new JsonPathClassifier();

	private final JsonTokenizer json = new JsonTokenizer(this.paths);

	private int lineState;

	/** How much of "data" the field name has matched so far, or -1 once it differs. */
	private int nameMatched;

	/** How much of "event" the field name has matched so far, or -1 once it differs. */
	private int eventNameMatched;

	/** The event type's first bytes; its length is {@code MAX_TEXT + 1} when longer. */
	private final byte[] eventType = new byte[JsonStringReader.MAX_TEXT];

	/**
	 * Length of the event's type, or -1 when the event has no {@code event} field (yet).
	 */
	private int eventTypeLength = -1;

	/**
	 * How much of a leading byte order mark has been seen; {@code BOM.length} once past
	 * it.
	 */
	private int bomMatched;

	/**
	 * How much of "[DONE]" the payload has matched past leading whitespace, or -1 once it
	 * differs.
	 */
	private int doneMatched;

	private boolean afterCr;

	private SseEventKind completed;

	private boolean eventHasLines;

	private boolean eventHasData;

	private long outputTokens = -1;

	private long contentChoices;

	private int tokensChoice = -1;

	private boolean engineMetrics;

	private double engineQueueMs = Double.NaN;

	private double engineFirstTokenMs = Double.NaN;

	private double engineGenerationMs = Double.NaN;

	private double engineMeanItlMs = Double.NaN;

	private long enginePreemptions = -1;

	/** How the stream's events start; null in the memo's own snapshot. */
	private final EventStartMemo memo;

	/**
	 * Creates a scanner positioned at the start of a stream.
	 */
	public SseEventScanner() {
		this.memo = new EventStartMemo();
	}

	private SseEventScanner(EventStartMemo memo) {
		this.memo = memo;
	}

	/** The memo of the stream's event starts, null in a snapshot (for tests). */
	EventStartMemo memo() {
		return this.memo;
	}

	/** A scanner that reads every byte, for the memo's snapshot. */
	static SseEventScanner withoutMemo() {
		return new SseEventScanner(null);
	}

	/**
	 * Feeds one byte; returns the kind of the event this byte completed, or null when
	 * none completed.
	 * @param b the next byte of the response body
	 * @return the kind of the event that this byte dispatched, or {@code null}
	 */
	public SseEventKind accept(byte b) {
		if (this.memo != null) {
			this.memo.stopRecording();
		}
		return step(b);
	}

	private SseEventKind step(byte b) {
		if (this.bomMatched < BOM.length && skipBom(b)) {
			return null;
		}
		if (b == '\n' || b == '\r') {
			boolean secondHalfOfCrLf = b == '\n' && this.afterCr;
			this.afterCr = b == '\r';
			return secondHalfOfCrLf ? null : endLine();
		}
		this.afterCr = false;
		switch (this.lineState) {
			case DATA_VALUE -> data(b);
			case LINE_START -> startLine(b);
			case FIELD_NAME -> fieldName(b);
			case DATA_START -> {
				this.lineState = DATA_VALUE;
				if (b != ' ') {
					data(b);
				}
			}
			case EVENT_VALUE -> eventType(b);
			case EVENT_START -> {
				this.lineState = EVENT_VALUE;
				if (b != ' ') {
					eventType(b);
				}
			}
			default -> {
				// SKIP_LINE: a comment or a field other than data
			}
		}
		return null;
	}

	/**
	 * Feeds the bytes from {@code from} up to the first that completes an event, or to
	 * {@code to}: what {@link #accept} would report of each byte, in one call. The bytes
	 * of a buffer backed by an accessible array are read as
	 * {@link #scan(byte[], int, int)} reads them; any other buffer's (a direct or
	 * read-only one) a byte at a time, more slowly and without the memo of event starts.
	 * @param bytes the response body's bytes (their position and limit are not used)
	 * @param from the index of the first byte to feed
	 * @param to the index after the last byte to feed
	 * @return the index after the last byte fed: {@code to}, or the byte after the one
	 * that completed an event, whose kind {@link #completed()} then tells
	 */
	public int scan(ByteBuffer bytes, int from, int to) {
		this.completed = null;
		if (bytes.hasArray()) {
			int offset = bytes.arrayOffset();
			return scan(bytes.array(), offset + from, offset + to) - offset;
		}
		for (int i = from; i < to;) {
			SseEventKind kind = accept(bytes.get(i++));
			if (kind != null) {
				this.completed = kind;
				return i;
			}
		}
		return to;
	}

	/**
	 * Feeds the bytes from {@code from} up to the first that completes an event, or to
	 * {@code to}, as {@link #scan(ByteBuffer, int, int)} does. The plain bytes of a JSON
	 * string in a data line (most of an event) are read in a tight loop; every other byte
	 * goes through {@link #accept}. An event that starts with the bytes the stream's
	 * recent events shared (see {@link EventStartMemo}) takes the state those bytes leave
	 * and is read on after them.
	 * @param bytes the response body's bytes
	 * @param from the index of the first byte to feed
	 * @param to the index after the last byte to feed
	 * @return the index after the last byte fed: {@code to}, or the byte after the one
	 * that completed an event, whose kind {@link #completed()} then tells
	 */
	public int scan(byte[] bytes, int from, int to) {
		int i = from;
		EventStartMemo memo = this.memo;
		int recordFrom = (memo != null && memo.recording()) ? from : -1;
		while (i < to) {
			if (this.lineState == DATA_VALUE && this.doneMatched < 0) {
				// a line end is never plain (the reader stops at control characters), a
				// data line starts past any byte order mark, and a payload that differed
				// from [DONE] stays so
				int plain = this.json.acceptPlain(bytes, i, to);
				if (plain > i) {
					this.afterCr = false;
					i = plain;
					continue;
				}
			}
			if (this.lineState == LINE_START && !this.eventHasLines && !this.afterCr && this.bomMatched == BOM.length
					&& memo != null && memo.active()) {
				// an event starts here (or a blank line before one)
				int known = memo.match(bytes, i, to);
				if (known > 0) {
					copyEventFrom(memo.snapshot());
					memo.stopRecording();
					recordFrom = -1;
					i += known;
					continue;
				}
				memo.startRecording();
				recordFrom = i;
			}
			SseEventKind kind = step(bytes[i++]);
			if (kind != null) {
				if (recordFrom >= 0) {
					memo.record(bytes, recordFrom, i - 1);
					memo.learn();
				}
				this.completed = kind;
				return i;
			}
		}
		if (recordFrom >= 0) {
			memo.record(bytes, recordFrom, to);
		}
		this.completed = null;
		return to;
	}

	/**
	 * Takes on the state another scanner reached within an event: its line, its fields
	 * and its JSON so far. What the last completed event carried is kept.
	 */
	private void copyEventFrom(SseEventScanner other) {
		this.paths.copyFrom(other.paths);
		this.json.copyFrom(other.json);
		this.lineState = other.lineState;
		this.nameMatched = other.nameMatched;
		this.eventNameMatched = other.eventNameMatched;
		System.arraycopy(other.eventType, 0, this.eventType, 0, this.eventType.length);
		this.eventTypeLength = other.eventTypeLength;
		this.bomMatched = other.bomMatched;
		this.doneMatched = other.doneMatched;
		this.afterCr = other.afterCr;
		this.eventHasLines = other.eventHasLines;
		this.eventHasData = other.eventHasData;
	}

	/**
	 * Puts a memo's snapshot at the start of an event of a stream past its first bytes.
	 */
	void startEvent() {
		reset();
		this.bomMatched = BOM.length;
	}

	/**
	 * The kind of the event the last {@link #scan} completed, or null when it reached its
	 * end without completing one.
	 * @return the kind, or null
	 */
	public SseEventKind completed() {
		return this.completed;
	}

	/**
	 * The output token count the event last completed carried, or -1 when it carried
	 * none: {@code usage.completion_tokens} (chat, completions, audio),
	 * {@code usage.output_tokens} (Messages API's {@code message_delta}) or
	 * {@code response.usage.output_tokens} (Responses API).
	 * @return the count, or -1
	 */
	public long outputTokens() {
		return this.outputTokens;
	}

	/**
	 * The choice that {@link #outputTokens()} counts: the index of the last event's only
	 * choice, or -1 when the count is the whole stream's (a usage chunk without choices,
	 * several choices, or a shape without choices).
	 * @return the choice index, or -1
	 */
	public int tokensChoice() {
		return this.tokensChoice;
	}

	/**
	 * Which choices the last {@link SseEventKind#CONTENT} event carried content for: bit
	 * {@code i} for choice index {@code i}, indexes from {@value #MAX_CHOICE_BIT} up
	 * sharing the last bit. Shapes without choices (Responses, Messages) report choice 0.
	 * Zero for other kinds.
	 * @return the bit set of choice indexes
	 */
	public long contentChoices() {
		return this.contentChoices;
	}

	/**
	 * Whether the event last completed carried vLLM's per-request metrics
	 * ({@code --enable-per-request-metrics}): a {@code metrics} object at the JSON's root
	 * (the final usage chunk of chat and text completions) or in its root
	 * {@code response} (the Responses API's {@code response.completed}) with a value for
	 * at least one of the fields the {@code engine*} accessors read. A
	 * {@code "metrics":null} (vLLM's answer for {@code n > 1}) or an object of nulls is
	 * none.
	 * @return whether the engine* accessors describe the last event
	 */
	public boolean engineMetrics() {
		return this.engineMetrics;
	}

	/**
	 * The last event's {@code metrics.queue_time_ms}: how long the request waited in the
	 * engine's queue.
	 * @return milliseconds, or NaN when absent, null or not a finite number
	 */
	public double engineQueueMs() {
		return this.engineQueueMs;
	}

	/**
	 * The last event's {@code metrics.time_to_first_token_ms}.
	 * @return milliseconds, or NaN when absent, null or not a finite number
	 */
	public double engineFirstTokenMs() {
		return this.engineFirstTokenMs;
	}

	/**
	 * The last event's {@code metrics.generation_time_ms}.
	 * @return milliseconds, or NaN when absent, null or not a finite number
	 */
	public double engineGenerationMs() {
		return this.engineGenerationMs;
	}

	/**
	 * The last event's {@code metrics.mean_itl_ms}: the engine's mean inter-token
	 * latency.
	 * @return milliseconds, or NaN when absent, null or not a finite number
	 */
	public double engineMeanItlMs() {
		return this.engineMeanItlMs;
	}

	/**
	 * The last event's {@code metrics.num_preemptions}, which only some builds add.
	 * @return the count, or -1 unless it was a non-negative integer
	 */
	public long enginePreemptions() {
		return this.enginePreemptions;
	}

	/**
	 * Forgets all state (for reuse).
	 */
	public void reset() {
		if (this.memo != null) {
			this.memo.clear();
		}
		this.lineState = LINE_START;
		this.bomMatched = 0;
		this.afterCr = false;
		this.outputTokens = -1;
		this.contentChoices = 0;
		this.tokensChoice = -1;
		this.completed = null;
		forgetEngineMetrics();
		resetEvent();
	}

	private void resetEvent() {
		this.eventHasLines = false;
		this.eventHasData = false;
		this.doneMatched = 0;
		this.eventTypeLength = -1;
		this.json.reset();
		this.paths.reset();
	}

	/**
	 * Consumes the UTF-8 byte order mark a stream may start with; a partial one was the
	 * start of an (unknown) field name.
	 */
	private boolean skipBom(byte b) {
		if (b == BOM[this.bomMatched]) {
			this.bomMatched++;
			return true;
		}
		if (this.bomMatched > 0) {
			this.eventHasLines = true;
			this.lineState = FIELD_NAME;
			this.nameMatched = -1;
		}
		this.bomMatched = BOM.length;
		return false;
	}

	private void startLine(byte b) {
		this.eventHasLines = true;
		if (b == ':') {
			this.lineState = SKIP_LINE;
			return;
		}
		this.lineState = FIELD_NAME;
		this.nameMatched = 0;
		this.eventNameMatched = 0;
		fieldName(b);
	}

	private void fieldName(byte b) {
		if (b == ':') {
			if (isDataField()) {
				startData();
				this.lineState = DATA_START;
			}
			else if (isEventField()) {
				this.eventTypeLength = 0;
				this.lineState = EVENT_START;
			}
			else {
				this.lineState = SKIP_LINE;
			}
			return;
		}
		this.nameMatched = match(DATA, this.nameMatched, b);
		this.eventNameMatched = match(EVENT, this.eventNameMatched, b);
	}

	private static int match(byte[] name, int matched, byte b) {
		return (matched >= 0 && matched < name.length && b == name[matched]) ? matched + 1 : -1;
	}

	private boolean isDataField() {
		return this.nameMatched == DATA.length;
	}

	private boolean isEventField() {
		return this.eventNameMatched == EVENT.length;
	}

	private void eventType(byte b) {
		if (this.eventTypeLength < this.eventType.length) {
			this.eventType[this.eventTypeLength++] = b;
		}
		else {
			this.eventTypeLength = this.eventType.length + 1;
		}
	}

	private void startData() {
		if (this.eventHasData) {
			data((byte) '\n');
		}
		this.eventHasData = true;
	}

	private void data(byte b) {
		matchDone(b);
		this.json.accept(b);
	}

	private void matchDone(byte b) {
		int matched = this.doneMatched;
		if (matched < 0) {
			return;
		}
		if (b == ' ' || b == '\n' || b == '\t') {
			if (matched > 0 && matched < DONE.length) {
				this.doneMatched = -1;
			}
			return;
		}
		this.doneMatched = (matched < DONE.length && b == DONE[matched]) ? matched + 1 : -1;
	}

	private SseEventKind endLine() {
		int state = this.lineState;
		this.lineState = LINE_START;
		if (state == FIELD_NAME && isDataField()) {
			// "data" without a colon is a data field with an empty value
			startData();
		}
		else if (state == FIELD_NAME && isEventField()) {
			// so is "event": an empty type, which means none
			this.eventTypeLength = 0;
		}
		return (state == LINE_START) ? dispatch() : null;
	}

	private SseEventKind dispatch() {
		if (!this.eventHasLines) {
			return null;
		}
		SseEventKind kind;
		if (!this.eventHasData) {
			kind = SseEventKind.COMMENT;
		}
		else if (this.doneMatched == DONE.length) {
			kind = SseEventKind.DONE;
		}
		else if (this.json.isComplete()) {
			boolean typed = this.eventTypeLength > 0;
			kind = this.paths.kind(typed ? this.eventType : null, this.eventTypeLength);
		}
		else {
			kind = SseEventKind.OTHER;
		}
		boolean complete = this.json.isComplete();
		this.outputTokens = complete ? this.paths.outputTokens() : -1;
		this.tokensChoice = complete ? this.paths.tokensChoice() : -1;
		this.contentChoices = (kind == SseEventKind.CONTENT) ? this.paths.contentChoices() : 0;
		if (complete && this.paths.engineMetrics()) {
			copyEngineMetrics();
		}
		else if (this.engineMetrics) {
			forgetEngineMetrics();
		}
		resetEvent();
		return kind;
	}

	/**
	 * Copies the per-request metrics; one event of a stream carries them, so this runs
	 * once.
	 */
	private void copyEngineMetrics() {
		this.engineMetrics = true;
		this.engineQueueMs = this.paths.queueMs();
		this.engineFirstTokenMs = this.paths.firstTokenMs();
		this.engineGenerationMs = this.paths.generationMs();
		this.engineMeanItlMs = this.paths.meanItlMs();
		this.enginePreemptions = this.paths.preemptions();
	}

	private void forgetEngineMetrics() {
		this.engineMetrics = false;
		this.engineQueueMs = Double.NaN;
		this.engineFirstTokenMs = Double.NaN;
		this.engineGenerationMs = Double.NaN;
		this.engineMeanItlMs = Double.NaN;
		this.enginePreemptions = -1;
	}

}
