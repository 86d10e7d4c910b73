package dev.tokengap.sse;

/**
 * Validating JSON tokenizer fed one byte at a time (a string's plain bytes may come a run
 * at a time, {@link #acceptPlain}), with state bounded regardless of input. It reports
 * structure to a {@link JsonPathClassifier} and keeps no payload; strings and numbers are
 * read by a {@link JsonStringReader} and a {@link JsonNumberReader}.
 * <p>
 * The document must be one object. Containers nested deeper than {@value #MAX_DEPTH} are
 * skipped by counting brackets outside strings, without checking their grammar. <pre>
 * START --'{'--> FIRST_KEY --'"'--> KEY_STRING --'"'--> COLON --':'--> VALUE
 * VALUE --'"'--> STRING --'"'--> AFTER_VALUE     (likewise NUMBER, LITERAL, or a nested container
 *                                                 via FIRST_KEY / FIRST_VALUE)
 * AFTER_VALUE --','--> KEY (in an object) or VALUE (in an array)
 * AFTER_VALUE --'}' or ']'--> AFTER_VALUE, or END once the outermost object closes
 * any grammar error --> FAILED, until reset
 * </pre>
 */
final class JsonTokenizer {

	private static final int MAX_DEPTH = 64;

	private static final byte[] TRUE = { 't', 'r', 'u', 'e' };

	private static final byte[] FALSE = { 'f', 'a', 'l', 's', 'e' };

	private static final byte[] NULL = { 'n', 'u', 'l', 'l' };

	private static final int START = 0, VALUE = 1, FIRST_KEY = 2, KEY = 3, COLON = 4, AFTER_VALUE = 5, FIRST_VALUE = 6,
			KEY_STRING = 7, STRING = 8, NUMBER = 9, LITERAL = 10, SKIP = 11, SKIP_STRING = 12, SKIP_ESCAPE = 13,
			END = 14, FAILED = 15;

	private final JsonPathClassifier paths;

	private final JsonStringReader string = new JsonStringReader();

	private final JsonNumberReader number = new JsonNumberReader();

	private int state;

	private int depth;

	/** Bit {@code d - 1} is set when the container at depth {@code d} is an object. */
	private long objects;

	private long skipDepth;

	private byte[] literal;

	private int literalIndex;

	JsonTokenizer(JsonPathClassifier paths) {
		this.paths = paths;
	}

	/**
	 * Whether the bytes so far form exactly one complete JSON object (trailing whitespace
	 * allowed).
	 */
	boolean isComplete() {
		return this.state == END;
	}

	/**
	 * Takes on another tokenizer's state and its readers', as if it had read what that
	 * one read; its classifier is copied apart.
	 */
	void copyFrom(JsonTokenizer other) {
		this.string.copyFrom(other.string);
		this.number.copyFrom(other.number);
		this.state = other.state;
		this.depth = other.depth;
		this.objects = other.objects;
		this.skipDepth = other.skipDepth;
		this.literal = other.literal;
		this.literalIndex = other.literalIndex;
	}

	void reset() {
		this.state = START;
		this.depth = 0;
		this.objects = 0;
		this.skipDepth = 0;
	}

	void accept(byte b) {
		switch (this.state) {
			case STRING, KEY_STRING -> string(b);
			case START -> start(b);
			case VALUE -> value(b);
			case FIRST_VALUE -> firstValue(b);
			case FIRST_KEY -> firstKey(b);
			case KEY -> key(b);
			case COLON -> colon(b);
			case AFTER_VALUE -> afterValue(b);
			case NUMBER -> number(b);
			case LITERAL -> literal(b);
			case SKIP, SKIP_STRING, SKIP_ESCAPE -> skip(b);
			case END -> expectWhitespace(b);
			default -> {
				// FAILED: stays failed until reset
			}
		}
	}

	/**
	 * Reads, from {@code from}, the bytes inside a string that {@link #accept} would only
	 * add to it (see {@link JsonStringReader#acceptPlain}), and returns the index of the
	 * first byte it did not read; none outside a string. Never reads a line end.
	 * @param bytes the bytes
	 * @param from the first byte to read
	 * @param to the end of the bytes to read
	 * @return the index of the first byte not read
	 */
	int acceptPlain(byte[] bytes, int from, int to) {
		return (this.state == STRING || this.state == KEY_STRING) ? this.string.acceptPlain(bytes, from, to) : from;
	}

	private void start(byte b) {
		if (b == '{') {
			open(b);
		}
		else {
			expectWhitespace(b);
		}
	}

	private void firstValue(byte b) {
		if (b == ']') {
			close(false);
		}
		else {
			value(b);
		}
	}

	private void firstKey(byte b) {
		if (b == '}') {
			close(true);
		}
		else {
			key(b);
		}
	}

	private void key(byte b) {
		if (b == '"') {
			this.string.start();
			this.state = KEY_STRING;
		}
		else {
			expectWhitespace(b);
		}
	}

	private void colon(byte b) {
		if (b == ':') {
			this.state = VALUE;
		}
		else {
			expectWhitespace(b);
		}
	}

	private void value(byte b) {
		switch (b) {
			case ' ', '\t', '\n', '\r' -> {
				// whitespace before a value
			}
			case '{', '[' -> open(b);
			case '"' -> {
				this.paths.valueStart(b);
				this.string.start();
				this.state = STRING;
			}
			case 't' -> startLiteral(b, TRUE);
			case 'f' -> startLiteral(b, FALSE);
			case 'n' -> startLiteral(b, NULL);
			default -> {
				if (b == '-' || (b >= '0' && b <= '9')) {
					this.paths.valueStart(b);
					this.number.start(b);
					this.state = NUMBER;
				}
				else {
					this.state = FAILED;
				}
			}
		}
	}

	private void afterValue(byte b) {
		switch (b) {
			case ',' -> this.state = inObject() ? KEY : VALUE;
			case '}' -> close(true);
			case ']' -> close(false);
			default -> expectWhitespace(b);
		}
	}

	private void expectWhitespace(byte b) {
		if (b != ' ' && b != '\n' && b != '\t' && b != '\r') {
			this.state = FAILED;
		}
	}

	private void open(byte b) {
		this.paths.valueStart(b);
		if (this.depth == MAX_DEPTH) {
			this.skipDepth = 1;
			this.state = SKIP;
			return;
		}
		long bit = 1L << this.depth;
		this.depth++;
		if (b == '{') {
			this.objects |= bit;
			this.state = FIRST_KEY;
		}
		else {
			this.objects &= ~bit;
			this.state = FIRST_VALUE;
		}
	}

	private void close(boolean object) {
		if (inObject() != object) {
			this.state = FAILED;
			return;
		}
		this.depth--;
		this.paths.containerEnd();
		this.state = (this.depth == 0) ? END : AFTER_VALUE;
	}

	private boolean inObject() {
		return ((this.objects >>> (this.depth - 1)) & 1L) != 0;
	}

	private void string(byte b) {
		int result = this.string.accept(b);
		if (result == JsonStringReader.MORE) {
			return;
		}
		if (result == JsonStringReader.INVALID) {
			this.state = FAILED;
		}
		else if (this.state == KEY_STRING) {
			this.paths.key(this.string.text(), this.string.length());
			this.state = COLON;
		}
		else {
			this.paths.stringEnd(this.string.isEmpty(), this.string.text(), this.string.length());
			this.state = AFTER_VALUE;
		}
	}

	private void number(byte b) {
		int result = this.number.accept(b);
		if (result == JsonNumberReader.INVALID) {
			this.state = FAILED;
		}
		else if (result == JsonNumberReader.END) {
			this.paths.numberEnd(this.number);
			this.state = AFTER_VALUE;
			// the byte that ends a number belongs to what follows it
			afterValue(b);
		}
	}

	private void startLiteral(byte b, byte[] literal) {
		this.paths.valueStart(b);
		this.literal = literal;
		this.literalIndex = 1;
		this.state = LITERAL;
	}

	private void literal(byte b) {
		if (b != this.literal[this.literalIndex]) {
			this.state = FAILED;
		}
		else if (++this.literalIndex == this.literal.length) {
			this.state = AFTER_VALUE;
		}
	}

	private void skip(byte b) {
		switch (this.state) {
			case SKIP_STRING -> this.state = (b == '\\') ? SKIP_ESCAPE : (b == '"') ? SKIP : SKIP_STRING;
			case SKIP_ESCAPE -> this.state = SKIP_STRING;
			default -> {
				if (b == '"') {
					this.state = SKIP_STRING;
				}
				else if (b == '{' || b == '[') {
					this.skipDepth++;
				}
				else if ((b == '}' || b == ']') && --this.skipDepth == 0) {
					this.paths.containerEnd();
					this.state = AFTER_VALUE;
				}
			}
		}
	}

}
