package dev.tokengap.sim;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;

/**
 * Writes doubles exactly as Python's {@code prometheus_client} does
 * ({@code floatToGoString} over {@code repr}), so a scraped {@code le="2560.0"} or
 * {@code 1.7769301736864529e+09} matches vLLM.
 */
final class PythonFloats {

	private PythonFloats() {
	}

	static String goString(double value) {
		if (value == Double.POSITIVE_INFINITY) {
			return "+Inf";
		}
		if (value == Double.NEGATIVE_INFINITY) {
			return "-Inf";
		}
		if (Double.isNaN(value)) {
			return "NaN";
		}
		String repr = repr(value);
		int dot = repr.indexOf('.');
		// prometheus_client: "Go switches to exponents sooner than Python",
		// quirks (e+010) included.
		if (value > 0 && dot > 6) {
			String mantissa = repr.charAt(0) + "." + repr.substring(1, dot) + repr.substring(dot + 1);
			return stripZerosAndDots(mantissa) + "e+0" + (dot - 1);
		}
		return repr;
	}

	/**
	 * Python's {@code repr(float)}: shortest round-trip digits, exponent below 1e-4 and
	 * from 1e16.
	 */
	static String repr(double value) {
		if (Double.isNaN(value)) {
			return "nan";
		}
		if (value == 0) {
			return (1 / value < 0) ? "-0.0" : "0.0";
		}
		BigDecimal decimal = shortest(Math.abs(value));
		String digits = decimal.unscaledValue().toString();
		int point = digits.length() - decimal.scale();
		String sign = (value < 0) ? "-" : "";
		if (point > -4 && point <= 16) {
			return sign + plain(digits, point);
		}
		String mantissa = (digits.length() == 1) ? digits : digits.charAt(0) + "." + digits.substring(1);
		int exponent = point - 1;
		return sign + mantissa + "e" + ((exponent < 0) ? "-" : "+") + ((Math.abs(exponent) < 10) ? "0" : "")
				+ Math.abs(exponent);
	}

	/**
	 * The fewest significant digits that read back as the same double (Java 17's
	 * {@code Double.toString} is not always shortest, JDK-4511638; Python's repr is).
	 */
	private static BigDecimal shortest(double value) {
		BigDecimal exact = new BigDecimal(value);
		for (int digits = 1; digits < 17; digits++) {
			BigDecimal rounded = exact.round(new MathContext(digits, RoundingMode.HALF_EVEN));
			if (rounded.doubleValue() == value) {
				return rounded.stripTrailingZeros();
			}
		}
		return exact.round(new MathContext(17, RoundingMode.HALF_EVEN)).stripTrailingZeros();
	}

	private static String plain(String digits, int point) {
		if (point <= 0) {
			return "0." + "0".repeat(-point) + digits;
		}
		if (point >= digits.length()) {
			return digits + "0".repeat(point - digits.length()) + ".0";
		}
		return digits.substring(0, point) + "." + digits.substring(point);
	}

	private static String stripZerosAndDots(String text) {
		int end = text.length();
		while (end > 0 && (text.charAt(end - 1) == '0' || text.charAt(end - 1) == '.')) {
			end--;
		}
		return text.substring(0, end);
	}

}
