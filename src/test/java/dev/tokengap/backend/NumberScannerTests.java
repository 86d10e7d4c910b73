package dev.tokengap.backend;

import java.util.Random;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import dev.tokengap.metrics.BucketEdges;

import static org.assertj.core.api.Assertions.assertThat;

class NumberScannerTests {

	private final NumberScanner scanner = new NumberScanner();

	@ParameterizedTest
	@CsvSource(delimiter = '|', textBlock = """
			0            | 0.0
			0.0          | 0.0
			-0.0         | -0.0
			8.0          | 8.0
			0.001        | 0.001
			2560.0       | 2560.0
			0.6530455880475035 | 0.6530455880475035
			1.7769301736864529e+09 | 1.7769301736864529E9
			27453.0      | 27453.0
			1e22         | 1.0E22
			1e23         | 1.0E23
			9007199254740993 | 9.007199254740992E15
			123456789012345678901234567890 | 1.2345678901234568E29
			0.1e-5       | 1.0E-6
			NaN          | NaN
			+Inf         | Infinity
			-Inf         | -Infinity
			inf          | Infinity
			-Infinity    | -Infinity
			""")
	void readsNumbersAsJavaDoes(String text, double expected) {
		assertThat(this.scanner.scan(text, 0, text.length(), true)).isTrue();
		assertThat(Double.valueOf(this.scanner.value())).isEqualTo(Double.valueOf(expected));
	}

	@ParameterizedTest
	@ValueSource(strings = { "", "+", "-", ".", "e5", "1e", "1e+", "1.2.3", "0x1A", "1_000", "1d", "1f", "Inf+", "NaNa",
			"--1", "+-1", "1 ", " 1", "1,5" })
	void refusesWhatIsNotOneNumber(String text) {
		assertThat(this.scanner.scan(text, 0, text.length(), true)).isFalse();
		assertThat(NumberScanner.parse(text)).isNaN();
	}

	@Test
	void agreesWithJavaOnRandomDecimals() {
		Random random = new Random(7);
		for (int i = 0; i < 100_000; i++) {
			StringBuilder text = new StringBuilder();
			if (random.nextBoolean()) {
				text.append(random.nextBoolean() ? '-' : '+');
			}
			appendDigits(text, random, 1 + random.nextInt(12));
			if (random.nextBoolean()) {
				appendDigits(text.append('.'), random, random.nextInt(12));
			}
			if (random.nextInt(3) == 0) {
				text.append(random.nextBoolean() ? 'e' : 'E').append(random.nextBoolean() ? "-" : "+");
				text.append(random.nextInt(40));
			}
			String number = text.toString();
			assertThat(this.scanner.scan(number, 0, number.length(), true)).as(number).isTrue();
			assertThat(this.scanner.value()).as(number).isEqualTo(Double.parseDouble(number));
		}
	}

	@Test
	void readsVllmBucketEdgesExactly() {
		for (double edge : BucketEdges.VLLM_V1.ttft()) {
			assertThat(NumberScanner.parse(Double.toString(edge))).isEqualTo(edge);
		}
	}

	@Test
	void checksWithoutConvertingWhenAskedTo() {
		this.scanner.scan("1", 0, 1, true);
		assertThat(this.scanner.scan("1.7769301736864529e+09", 0, 22, false)).isTrue();
		assertThat(this.scanner.value()).isEqualTo(1.0);
	}

	@Test
	void readsANumberInsideALongerText() {
		String line = "a{le=\"0.25\"} 3.5 1000";
		assertThat(this.scanner.scan(line, 13, 16, true)).isTrue();
		assertThat(this.scanner.value()).isEqualTo(3.5);
	}

	private static void appendDigits(StringBuilder text, Random random, int count) {
		for (int i = 0; i < count; i++) {
			text.append((char) ('0' + random.nextInt(10)));
		}
	}

}
