package dev.tokengap.sse;

import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Random;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Numbers read as vLLM's metrics need them: decimals as doubles, checked against
 * {@link Double#parseDouble}, and non-negative integers exactly.
 */
class JsonNumberReaderTests {

	private final JsonNumberReader reader = new JsonNumberReader();

	/**
	 * Numbers as Python's {@code json.dumps} writes floats and ints, read exactly as Java
	 * would.
	 */
	@ParameterizedTest
	@ValueSource(strings = { "0", "-0", "12", "85.2", "1240.5", "12.3", "9.1", "103.2", "0.001", "-0.5", "1.5e-05",
			"1e-05", "2.5E+3", "10.25e-3", "7e0", "1e22", "123456789012345.6", "0.000123456789012345",
			"4503599627370496", "9007199254740991", "-273.15" })
	void readsDecimalsExactly(String number) {
		assertThat(read(number).doubleValue()).isEqualTo(Double.parseDouble(number));
	}

	@ParameterizedTest
	@ValueSource(strings = { "0.30000000000000004", "1e23", "1.2345e300", "2.2250738585072014e-308", "3.14159e-22",
			"123456789012345678901234567890", "0.1234567890123456789012345678901234567890", "6.02214076e23", "1.6e-35",
			"9223372036854775807.5", "4.9e-300" })
	void readsLongerOrFartherDecimalsWithinAFewUnitsInTheLastPlace(String number) {
		double expected = Double.parseDouble(number);
		assertThat(Math.abs(read(number).doubleValue() - expected)).as(number)
			.isLessThanOrEqualTo(4 * Math.ulp(expected));
	}

	@Test
	void readsRandomMillisecondsAsJavaWrites() {
		Random random = new Random(20260501);
		for (int i = 0; i < 20_000; i++) {
			double value = random.nextDouble() * Math.pow(10, random.nextInt(12) - 6);
			for (String text : new String[] { Double.toString(value), String.format(Locale.ROOT, "%.1f", value),
					String.format(Locale.ROOT, "%.6e", value) }) {
				double expected = Double.parseDouble(text);
				assertThat(Math.abs(read(text).doubleValue() - expected)).as(text)
					.isLessThanOrEqualTo(2 * Math.ulp(expected));
			}
		}
	}

	@ParameterizedTest
	@CsvSource({ "1e400, Infinity", "-1e400, -Infinity", "0e400, 0.0", "1e-400, 0.0", "0.0000e-5, 0.0",
			"1e99999999999, Infinity" })
	void readsNumbersPastADoublesRangeAsItsEnds(String number, double expected) {
		assertThat(read(number).doubleValue()).isEqualTo(expected);
	}

	@ParameterizedTest
	@CsvSource({ "0, 0", "7, 7", "9223372036854775807, 9223372036854775807", "9223372036854775808, -1",
			"92233720368547758070, -1", "-1, -1", "-0, -1", "1.0, -1", "1e0, -1" })
	void keepsTheIntegerValueOfNonNegativeIntegersOnly(String number, long expected) {
		assertThat(read(number).integerValue()).isEqualTo(expected);
	}

	@Test
	void forgetsThePreviousNumberAtTheStartOfTheNext() {
		read("-1.5e-3");
		assertThat(read("42").doubleValue()).isEqualTo(42.0);
		assertThat(read("42").integerValue()).isEqualTo(42);
	}

	/** Reads a whole number, which must end at the comma after it. */
	private JsonNumberReader read(String number) {
		byte[] bytes = number.getBytes(StandardCharsets.US_ASCII);
		this.reader.start(bytes[0]);
		for (int i = 1; i < bytes.length; i++) {
			assertThat(this.reader.accept(bytes[i])).as("%s at %d", number, i).isEqualTo(JsonNumberReader.MORE);
		}
		assertThat(this.reader.accept((byte) ',')).isEqualTo(JsonNumberReader.END);
		return this.reader;
	}

}
