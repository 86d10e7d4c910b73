package dev.tokengap.sse;

/**
 * Reads one JSON string after its opening quote, byte by byte or a run of plain bytes at
 * a time ({@link #acceptPlain}), validating escapes and keeping only whether it is empty
 * and its first {@value #MAX_TEXT} decoded bytes (enough for any key or value that
 * {@link JsonPathClassifier} matches).
 */
final class JsonStringReader {

	/** Returned while the string goes on. */
	static final int MORE = 0;

	/** Returned for the closing quote. */
	static final int END = 1;

	/** Returned for a byte that no JSON string may hold there. */
	static final int INVALID = 2;

	/**
	 * How many decoded bytes are kept; a longer string reports a length of
	 * {@code MAX_TEXT + 1}.
	 */
	static final int MAX_TEXT = 64;

	private static final int CHARS = 0, ESCAPE = 1, UNICODE = 2;

	private static final byte NON_ASCII = (byte) 0x80;

	private final byte[] text = new byte[MAX_TEXT];

	private int state;

	private int length;

	private boolean empty;

	private int unicode;

	private int unicodeDigits;

	/** Takes on another reader's state, as if it had read what that one read. */
	void copyFrom(JsonStringReader other) {
		System.arraycopy(other.text, 0, this.text, 0, MAX_TEXT);
		this.state = other.state;
		this.length = other.length;
		this.empty = other.empty;
		this.unicode = other.unicode;
		this.unicodeDigits = other.unicodeDigits;
	}

	void start() {
		this.state = CHARS;
		this.length = 0;
		this.empty = true;
	}

	int accept(byte b) {
		return switch (this.state) {
			case CHARS -> chars(b);
			case ESCAPE -> escape(b);
			default -> unicode(b);
		};
	}

	/**
	 * Reads, from {@code from}, the plain bytes of the string (neither a quote, a
	 * backslash nor a control character) as {@link #accept} would, and returns the index
	 * of the first byte it did not read: {@code to}, or the byte that {@link #accept}
	 * must judge. Reads none unless the string is between escapes.
	 * @param bytes the bytes
	 * @param from the first byte to read
	 * @param to the end of the bytes to read
	 * @return the index of the first byte not read
	 */
	int acceptPlain(byte[] bytes, int from, int to) {
		if (this.state != CHARS) {
			return from;
		}
		int i = from;
		int kept = this.length;
		while (i < to) {
			byte b = bytes[i];
			if (b == '"' || b == '\\' || (b >= 0 && b < 0x20)) {
				break;
			}
			if (kept < MAX_TEXT) {
				this.text[kept++] = b;
			}
			else {
				kept = MAX_TEXT + 1;
			}
			i++;
		}
		if (i > from) {
			this.empty = false;
			this.length = kept;
		}
		return i;
	}

	boolean isEmpty() {
		return this.empty;
	}

	/**
	 * The first decoded bytes; only the first {@link #length()} of them, if that is at
	 * most {@link #MAX_TEXT}, belong to the string.
	 */
	byte[] text() {
		return this.text;
	}

	int length() {
		return this.length;
	}

	private int chars(byte b) {
		if (b == '"') {
			return END;
		}
		// raw control characters, such as the '\n' that joins two data lines, are invalid
		// in a string
		if (b >= 0 && b < 0x20) {
			return INVALID;
		}
		this.empty = false;
		if (b == '\\') {
			this.state = ESCAPE;
		}
		else {
			append(b);
		}
		return MORE;
	}

	private int escape(byte b) {
		this.state = CHARS;
		switch (b) {
			case '"', '\\', '/' -> append(b);
			case 'b' -> append((byte) '\b');
			case 'f' -> append((byte) '\f');
			case 'n' -> append((byte) '\n');
			case 'r' -> append((byte) '\r');
			case 't' -> append((byte) '\t');
			case 'u' -> {
				this.unicode = 0;
				this.unicodeDigits = 0;
				this.state = UNICODE;
			}
			default -> {
				return INVALID;
			}
		}
		return MORE;
	}

	private int unicode(byte b) {
		int digit = hexValue(b);
		if (digit < 0) {
			return INVALID;
		}
		this.unicode = (this.unicode << 4) | digit;
		if (++this.unicodeDigits == 4) {
			// The keys and values we match are ASCII,
			// so any other code point only has to mismatch.
			append((this.unicode < 0x80) ? (byte) this.unicode : NON_ASCII);
			this.state = CHARS;
		}
		return MORE;
	}

	private void append(byte b) {
		if (this.length < MAX_TEXT) {
			this.text[this.length++] = b;
		}
		else {
			this.length = MAX_TEXT + 1;
		}
	}

	private static int hexValue(byte b) {
		if (b >= '0' && b <= '9') {
			return b - '0';
		}
		if (b >= 'a' && b <= 'f') {
			return b - 'a' + 10;
		}
		if (b >= 'A' && b <= 'F') {
			return b - 'A' + 10;
		}
		return -1;
	}

}
