package dev.tokengap.sse;

/**
 * Reads one JSON number byte by byte, validating its grammar and keeping its value when it is a
 * non-negative integer that fits a long (all that {@code usage.completion_tokens} needs).
 * <pre>
 * ['-' MINUS] --> ZERO ('0') or INT --'.'--> FRACTION_START --digit--> FRACTION
 * ZERO, INT or FRACTION --'e' or 'E'--> EXPONENT_START --['+' or '-' EXPONENT_SIGN]--> EXPONENT
 * </pre>
 * A number has no closing byte: the first byte that cannot continue it ends it, unconsumed.
 */
final class JsonNumberReader {

	/** Returned while the number goes on. */
	static final int MORE = 0;

	/** Returned for the first byte after a complete number; that byte is not consumed. */
	static final int END = 1;

	/** Returned for a byte that leaves the number malformed. */
	static final int INVALID = 2;

	private static final int MINUS = 0, ZERO = 1, INT = 2, FRACTION_START = 3, FRACTION = 4, EXPONENT_START = 5,
			EXPONENT_SIGN = 6, EXPONENT = 7;

	private int state;

	private long value;

	/**
	 * Starts a number at its first byte, a {@code '-'} or a digit.
	 */
	void start(byte first) {
		if (first == '-') {
			this.state = MINUS;
			this.value = -1;
		}
		else {
			this.state = (first == '0') ? ZERO : INT;
			this.value = first - '0';
		}
	}

	int accept(byte b) {
		boolean digit = b >= '0' && b <= '9';
		switch (this.state) {
			case MINUS -> this.state = (b == '0') ? ZERO : digit ? INT : -1;
			case ZERO, INT, FRACTION -> {
				return afterDigit(b, digit);
			}
			case FRACTION_START -> this.state = digit ? FRACTION : -1;
			case EXPONENT_START -> this.state = digit ? EXPONENT : (b == '+' || b == '-') ? EXPONENT_SIGN : -1;
			case EXPONENT_SIGN -> this.state = digit ? EXPONENT : -1;
			default -> {
				return digit ? MORE : END;
			}
		}
		return (this.state < 0) ? INVALID : MORE;
	}

	/**
	 * The number's value when it is a non-negative integer that fits a long, else -1.
	 */
	long integerValue() {
		return this.value;
	}

	private int afterDigit(byte b, boolean digit) {
		if (digit && this.state != ZERO) {
			accumulate(b - '0');
		}
		else if (b == '.' && this.state != FRACTION) {
			notInteger(FRACTION_START);
		}
		else if (b == 'e' || b == 'E') {
			notInteger(EXPONENT_START);
		}
		else {
			// a digit after a leading zero ends the number here and fails what follows
			return END;
		}
		return MORE;
	}

	private void accumulate(int digit) {
		if (this.value >= 0) {
			this.value = (this.value > (Long.MAX_VALUE - digit) / 10) ? -1 : this.value * 10 + digit;
		}
	}

	private void notInteger(int next) {
		this.value = -1;
		this.state = next;
	}

}
