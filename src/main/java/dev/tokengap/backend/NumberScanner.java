package dev.tokengap.backend;

/**
 * Reads the numbers of the exposition formats in place. The values vLLM writes
 * ({@code 0.0}, {@code 8.0}, {@code 0.001}, {@code 2560.0}) take an exact fast path with
 * no allocation; only long mantissas or large exponents ({@code _created} timestamps) go
 * through {@link Double#parseDouble(String)}, so every result equals what Java itself
 * would parse.
 */
final class NumberScanner {

	// 10^0..10^22 are exact doubles; with a mantissa below 2^53 one multiply or divide is
	// then correctly rounded (Clinger's fast path).
	private static final double[] POWERS_OF_TEN = { 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12,
			1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22 };

	private static final long MAX_EXACT_MANTISSA = 1L << 53;

	private static final int EXPONENT_CAP = 100_000;

	private double value;

	/**
	 * The value of the last successful {@link #scan} with {@code convert} set.
	 * @return the value
	 */
	double value() {
		return this.value;
	}

	/**
	 * Checks (and optionally converts) a Prometheus float: a decimal with optional sign,
	 * fraction and exponent, or {@code NaN}, {@code Inf}, {@code +Inf}, {@code -Inf} in
	 * any letter case.
	 * @param text the text
	 * @param start first character
	 * @param end one past the last character
	 * @param convert whether to compute the value (syntax is always checked)
	 * @return whether the characters are exactly one such number
	 */
	boolean scan(CharSequence text, int start, int end, boolean convert) {
		if (start >= end) {
			return false;
		}
		int p = start;
		char c = text.charAt(p);
		boolean negative = c == '-';
		if (c == '+' || c == '-') {
			if (++p == end) {
				return false;
			}
			c = text.charAt(p);
		}
		if (c == 'N' || c == 'n' || c == 'I' || c == 'i') {
			return special(text, p, end, negative);
		}
		long mantissa = 0;
		boolean exact = true;
		boolean anyDigit = false;
		int exponent = 0;
		boolean fraction = false;
		for (; p < end; p++) {
			c = text.charAt(p);
			if (c >= '0' && c <= '9') {
				anyDigit = true;
				if (exact) {
					mantissa = mantissa * 10 + (c - '0');
					exact = mantissa < MAX_EXACT_MANTISSA;
					exponent -= fraction ? 1 : 0;
				}
			}
			else if (c == '.' && !fraction) {
				fraction = true;
			}
			else {
				break;
			}
		}
		if (!anyDigit) {
			return false;
		}
		if (p < end) {
			c = text.charAt(p);
			if (c != 'e' && c != 'E') {
				return false;
			}
			int explicit = exponent(text, p + 1, end);
			if (explicit == Integer.MIN_VALUE) {
				return false;
			}
			exponent += explicit;
		}
		if (convert) {
			this.value = (exact && Math.abs(exponent) < POWERS_OF_TEN.length) ? fast(mantissa, exponent, negative)
					: Double.parseDouble(text.subSequence(start, end).toString());
		}
		return true;
	}

	private static double fast(long mantissa, int exponent, boolean negative) {
		double magnitude = (exponent >= 0) ? mantissa * POWERS_OF_TEN[exponent] : mantissa / POWERS_OF_TEN[-exponent];
		return negative ? -magnitude : magnitude;
	}

	/** Reads {@code [+-]digits} to {@code end}, or returns {@code Integer.MIN_VALUE}. */
	private static int exponent(CharSequence text, int start, int end) {
		int p = start;
		boolean negative = false;
		if (p < end && (text.charAt(p) == '+' || text.charAt(p) == '-')) {
			negative = text.charAt(p++) == '-';
		}
		if (p == end) {
			return Integer.MIN_VALUE;
		}
		int exponent = 0;
		for (; p < end; p++) {
			char c = text.charAt(p);
			if (c < '0' || c > '9') {
				return Integer.MIN_VALUE;
			}
			// Past the cap the value is 0 or infinite anyway;
			// capping keeps the int from overflowing.
			exponent = Math.min(exponent * 10 + (c - '0'), EXPONENT_CAP);
		}
		return negative ? -exponent : exponent;
	}

	private boolean special(CharSequence text, int start, int end, boolean negative) {
		if (regionEqualsIgnoreCase(text, start, end, "nan")) {
			this.value = Double.NaN;
			return true;
		}
		if (regionEqualsIgnoreCase(text, start, end, "inf") || regionEqualsIgnoreCase(text, start, end, "infinity")) {
			this.value = negative ? Double.NEGATIVE_INFINITY : Double.POSITIVE_INFINITY;
			return true;
		}
		return false;
	}

	private static boolean regionEqualsIgnoreCase(CharSequence text, int start, int end, String lower) {
		if (end - start != lower.length()) {
			return false;
		}
		for (int i = 0; i < lower.length(); i++) {
			if (Character.toLowerCase(text.charAt(start + i)) != lower.charAt(i)) {
				return false;
			}
		}
		return true;
	}

	/**
	 * Parses a whole text as a Prometheus float, e.g. an {@code le} label value.
	 * @param text the text
	 * @return the value, or NaN when the text is not a number
	 */
	static double parse(CharSequence text) {
		NumberScanner scanner = new NumberScanner();
		return scanner.scan(text, 0, text.length(), true) ? scanner.value() : Double.NaN;
	}

}
