package dev.tokengap.sim;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

class PythonFloatsTests {

	@ParameterizedTest(name = "{0} -> {1}")
	@CsvSource(delimiter = '|', textBlock = """
			0.001                  | 0.001
			0.005                  | 0.005
			0.1                    | 0.1
			1                      | 1.0
			2.5                    | 2.5
			2560                   | 2560.0
			16384                  | 16384.0
			0                      | 0.0
			12                     | 12.0
			999999                 | 999999.0
			1000000                | 1e+06
			1234567                | 1.234567e+06
			1776930173.6864529     | 1.7769301736864529e+09
			1776930173.686474      | 1.776930173686474e+09
			1e15                   | 1e+015
			1e16                   | 1e+16
			0.30000000000000004    | 0.30000000000000004
			0.0001                 | 0.0001
			0.00001                | 1e-05
			0.000015               | 1.5e-05
			-1.5                   | -1.5
			-2500000               | -2500000.0
			""")
	void writesFloatsAsPrometheusClientDoes(double value, String expected) {
		assertThat(PythonFloats.goString(value)).isEqualTo(expected);
	}

	// Expected strings printed by CPython 3 (repr + prometheus_client's floatToGoString).
	@ParameterizedTest(name = "{0} -> {1}")
	@CsvSource(delimiter = '|', textBlock = """
			0.053373461999999997    | 0.053373461999999997
			2.0E-3                  | 0.002
			1.0E23                  | 1e+23
			5.0E-324                | 5e-324
			1.7976931348623157E308  | 1.7976931348623157e+308
			123456789.125           | 1.23456789125e+08
			3.3E-7                  | 3.3e-07
			0.3333333333333333      | 0.3333333333333333
			6666666.666666666       | 6.666666666666666e+06
			0.07500000000000001     | 0.07500000000000001
			""")
	void writesTheShortestDigitsThatReadBackAsPythonDoes(double value, String expected) {
		assertThat(PythonFloats.goString(value)).isEqualTo(expected);
	}

	@ParameterizedTest(name = "{0}")
	@CsvSource({ "Infinity, +Inf", "-Infinity, -Inf", "NaN, NaN" })
	void writesSpecialValuesAsPrometheusDoes(double value, String expected) {
		assertThat(PythonFloats.goString(value)).isEqualTo(expected);
	}

}
