package dev.tokengap.sse;

/**
 * Finds SSE event boundaries in a response body fed one byte at a time and classifies each event,
 * without copying or buffering the stream and without allocating after construction.
 * <p>
 * Framing follows the WHATWG event-stream rules: lines end with CRLF, LF or CR (a CRLF split across
 * two buffers is still one terminator), a blank line dispatches the event, {@code ':'} starts a
 * comment, and one space after a field's colon is dropped. Only {@code data} values are looked at:
 * they are joined with {@code '\n'} and classified as they pass by a bounded-state JSON tokenizer.
 * <pre>
 * LINE_START --':'--> SKIP_LINE                          (a comment)
 *     | other byte
 *     v
 * FIELD_NAME --':' after any other name--> SKIP_LINE     (event:, id:, retry:, ...)
 *     | ':' after "data"
 *     v
 * DATA_START --one optional ' '--> DATA_VALUE            (bytes go to the JSON tokenizer and the [DONE] match)
 *
 * CR, LF or CRLF in any state --> LINE_START; one that ends an empty line dispatches the event
 * </pre>
 * An event is reported on the byte that ends its blank line; with CRLF that is the CR, and the LF
 * that follows is swallowed. An instance serves one stream at a time and is not thread-safe.
 */
public final class SseEventScanner {

	private static final int LINE_START = 0, FIELD_NAME = 1, DATA_START = 2, DATA_VALUE = 3, SKIP_LINE = 4;

	private static final byte[] DATA = { 'd', 'a', 't', 'a' };

	private static final byte[] BOM = { (byte) 0xEF, (byte) 0xBB, (byte) 0xBF };

	private static final byte[] DONE = { '[', 'D', 'O', 'N', 'E', ']' };

	private final JsonPathClassifier paths = new JsonPathClassifier();

	private final JsonTokenizer json = new JsonTokenizer(this.paths);

	private int lineState;

	/** How much of "data" the field name has matched so far, or -1 once it differs. */
	private int nameMatched;

	/** How much of a leading byte order mark has been seen; {@code BOM.length} once past it. */
	private int bomMatched;

	/** How much of "[DONE]" the payload has matched past leading whitespace, or -1 once it differs. */
	private int doneMatched;

	private boolean afterCr;

	private boolean eventHasLines;

	private boolean eventHasData;

	private long completionTokens = -1;

	/**
	 * Creates a scanner positioned at the start of a stream.
	 */
	public SseEventScanner() {
	}

	/**
	 * Feeds one byte; returns the kind of the event this byte completed, or null when none completed.
	 * @param b the next byte of the response body
	 * @return the kind of the event that this byte dispatched, or {@code null}
	 */
	public SseEventKind accept(byte b) {
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
			default -> {
				// SKIP_LINE: a comment or a field other than data
			}
		}
		return null;
	}

	/**
	 * usage.completion_tokens of the event last completed, or -1 when that event carried none.
	 * @return the top-level {@code usage.completion_tokens} of the last event, or -1
	 */
	public long completionTokens() {
		return this.completionTokens;
	}

	/**
	 * Forgets all state (for reuse).
	 */
	public void reset() {
		this.lineState = LINE_START;
		this.bomMatched = 0;
		this.afterCr = false;
		this.completionTokens = -1;
		resetEvent();
	}

	private void resetEvent() {
		this.eventHasLines = false;
		this.eventHasData = false;
		this.doneMatched = 0;
		this.json.reset();
		this.paths.reset();
	}

	/**
	 * Consumes the UTF-8 byte order mark a stream may start with; a partial one was the start of an
	 * (unknown) field name.
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
		fieldName(b);
	}

	private void fieldName(byte b) {
		if (b == ':') {
			if (isDataField()) {
				startData();
				this.lineState = DATA_START;
			}
			else {
				this.lineState = SKIP_LINE;
			}
		}
		else if (this.nameMatched >= 0 && this.nameMatched < DATA.length && b == DATA[this.nameMatched]) {
			this.nameMatched++;
		}
		else {
			this.nameMatched = -1;
		}
	}

	private boolean isDataField() {
		return this.nameMatched == DATA.length;
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
		else {
			kind = this.json.isComplete() ? this.paths.kind() : SseEventKind.OTHER;
		}
		this.completionTokens = this.json.isComplete() ? this.paths.completionTokens() : -1;
		resetEvent();
		return kind;
	}

}
