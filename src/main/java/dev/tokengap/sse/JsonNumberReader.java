package dev.tokengap.sse;

/**
 * Reads one JSON number byte by byte, validating its grammar and keeping its value:
 * exactly when it is a non-negative integer that fits a long (all that
 * {@code usage.completion_tokens} needs), and as a double for any number (vLLM's
 * per-request metrics are milliseconds such as {@code 85.2} or {@code 1.5e-05}). <pre>
 * ['-' MINUS] --> ZERO ('0') or INT --'.'--> FRACTION_START --digit--> FRACTION
 * ZERO, INT or FRACTION --'e' or 'E'--> EXPONENT_START --['+' or '-' EXPONENT_SIGN]--> EXPONENT
 * </pre> A number has no closing byte: the first byte that cannot continue it ends it,
 * unconsumed. The digits are kept as a long mantissa and a power of ten, so reading
 * allocates nothing; the double is only computed when asked for.
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

	/**
	 * An exponent past this is as good as infinite: any double is then zero or infinity.
	 */
	private static final int MAX_EXPONENT = 100_000;

	/** The powers of ten a double holds exactly. */
	private static final double[] POWERS_OF_TEN = { 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12,
			1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22 };

	private int state;

	private boolean negative;

	/** The significant digits read, as many as fit a long. */
	private long mantissa;

	/**
	 * The power of ten the mantissa is to be scaled by: minus fraction digits, plus
	 * dropped ones.
	 */
	private long scale;

	private int exponent;

	private boolean negativeExponent;

	/** No fraction and no exponent. */
	private boolean integer;

	/** Takes on another reader's state, as if it had read what that one read. */
	void copyFrom(JsonNumberReader other) {
		this.state = other.state;
		this.negative = other.negative;
		this.mantissa = other.mantissa;
		this.scale = other.scale;
		this.exponent = other.exponent;
		this.negativeExponent = other.negativeExponent;
		this.integer = other.integer;
	}

	/**
	 * Starts a number at its first byte, a {@code '-'} or a digit.
	 */
	void start(byte first) {
		this.negative = first == '-';
		this.mantissa = 0;
		this.scale = 0;
		// the exponent's sign is only read with an exponent, which sets it
		this.exponent = 0;
		this.integer = true;
		if (this.negative) {
			this.state = MINUS;
		}
		else {
			this.state = (first == '0') ? ZERO : INT;
			this.mantissa = first - '0';
		}
	}

	/**
	 * Consumes the number's next byte. A byte that makes it {@link #INVALID} may leave
	 * anything in the value, which is then never read.
	 */
	int accept(byte b) {
		boolean digit = b >= '0' && b <= '9';
		switch (this.state) {
			case MINUS -> {
				this.state = (b == '0') ? ZERO : digit ? INT : -1;
				this.mantissa = b - '0';
			}
			case ZERO, INT, FRACTION -> {
				return afterDigit(b, digit);
			}
			case FRACTION_START -> {
				this.state = digit ? FRACTION : -1;
				fractionDigit(b - '0');
			}
			case EXPONENT_START -> {
				this.state = digit ? EXPONENT : (b == '+' || b == '-') ? EXPONENT_SIGN : -1;
				this.negativeExponent = b == '-';
				exponentDigit(digit, b);
			}
			case EXPONENT_SIGN -> {
				this.state = digit ? EXPONENT : -1;
				exponentDigit(digit, b);
			}
			default -> {
				if (!digit) {
					return END;
				}
				exponentDigit(true, b);
			}
		}
		return (this.state < 0) ? INVALID : MORE;
	}

	/**
	 * The number's value when it is a non-negative integer that fits a long, else -1.
	 */
	long integerValue() {
		return (this.integer && !this.negative && this.scale == 0) ? this.mantissa : -1;
	}

	/**
	 * The number's value: correctly rounded when its digits make an integer below
	 * 2<sup>53</sup> scaled by at most 22 powers of ten (such as every millisecond figure
	 * Python writes with up to 15 significant digits), else within a few units in the
	 * last place; infinite past a double's range.
	 */
	double doubleValue() {
		if (this.mantissa == 0) {
			return this.negative ? -0.0 : 0.0;
		}
		long power = this.scale + (this.negativeExponent ? -this.exponent : this.exponent);
		double value = scaled(this.mantissa, power);
		return this.negative ? -value : value;
	}

	/**
	 * One exact multiplication or division for the powers a double holds exactly (then
	 * the result is rounded once); a tiny number is divided in two steps so that the
	 * power of ten does not underflow (or its inverse overflow) before the mantissa is
	 * applied.
	 */
	private static double scaled(long mantissa, long power) {
		int exact = POWERS_OF_TEN.length - 1;
		if (power >= 0) {
			return mantissa * ((power <= exact) ? POWERS_OF_TEN[(int) power] : Math.pow(10, power));
		}
		if (power >= -exact) {
			return mantissa / POWERS_OF_TEN[(int) -power];
		}
		return mantissa / POWERS_OF_TEN[exact] * Math.pow(10, power + exact);
	}

	private int afterDigit(byte b, boolean digit) {
		if (digit && this.state == FRACTION) {
			fractionDigit(b - '0');
		}
		else if (digit && this.state != ZERO) {
			integerDigit(b - '0');
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

	/**
	 * Once a digit is dropped, so are all after it: the mantissa keeps the leading ones.
	 */
	private void integerDigit(int digit) {
		if (this.scale > 0 || this.mantissa > (Long.MAX_VALUE - digit) / 10) {
			this.scale++;
		}
		else {
			this.mantissa = this.mantissa * 10 + digit;
		}
	}

	/**
	 * A fraction digit that no longer fits the mantissa is below its precision, so
	 * dropped (the bound does not depend on the digit, so neither do the digits after
	 * it).
	 */
	private void fractionDigit(int digit) {
		if (this.mantissa <= (Long.MAX_VALUE - 9) / 10) {
			this.mantissa = this.mantissa * 10 + digit;
			this.scale--;
		}
	}

	private void exponentDigit(boolean digit, byte b) {
		if (digit && this.exponent < MAX_EXPONENT) {
			this.exponent = this.exponent * 10 + (b - '0');
		}
	}

	private void notInteger(int next) {
		this.integer = false;
		this.state = next;
	}

}
