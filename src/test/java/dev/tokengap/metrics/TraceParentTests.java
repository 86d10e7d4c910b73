package dev.tokengap.metrics;

import java.util.HashSet;
import java.util.Set;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * {@code traceparent} values as W3C Trace Context level 1 reads them: version {@code 00}
 * exactly, a later version by its first 55 characters, and anything else invalid.
 */
class TraceParentTests {

	static final String TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";

	static final String PARENT = "00f067aa0ba902b7";

	@ParameterizedTest(name = "[{index}] {0}")
	@CsvSource(delimiter = '|', nullValues = "NULL",
			textBlock = """
					00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 | 4bf92f3577b34da6a3ce929d0e0e4736 | true
					00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00 | 4bf92f3577b34da6a3ce929d0e0e4736 | false
					00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-03 | 4bf92f3577b34da6a3ce929d0e0e4736 | true
					00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-02 | 4bf92f3577b34da6a3ce929d0e0e4736 | false
					01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 | 4bf92f3577b34da6a3ce929d0e0e4736 | true
					cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-the-future-holds | 4bf92f3577b34da6a3ce929d0e0e4736 | true
					fe-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00- | 4bf92f3577b34da6a3ce929d0e0e4736 | false
					""")
	void readsAValidValue(String value, String traceId, boolean sampled) {
		assertThat(TraceParent.isValid(value)).isTrue();
		assertThat(TraceParent.traceId(value)).isEqualTo(traceId);
		assertThat(TraceParent.sampled(value)).isEqualTo(sampled);
	}

	@ParameterizedTest(name = "[{index}] {1}")
	@CsvSource(delimiter = '|', nullValues = "NULL",
			textBlock = """
					NULL | absent
					'' | empty
					00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0 | one flag digit
					00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01- | version 00 with more
					00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-00 | version 00 with more fields
					cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x | a later version with more not after a dash
					ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 | version ff
					0g-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 | version not hex
					0A-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 | version upper case
					00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01 | trace id upper case
					00-00000000000000000000000000000000-00f067aa0ba902b7-01 | trace id all zeros
					00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01 | parent id all zeros
					00-4bf92f3577b34da6a3ce929d0e0e473-600f067aa0ba902b7-01 | trace id one digit short
					00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b-701 | parent id one digit short
					00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0z | flags not hex
					00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01 | not dashes
					00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01,00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 | two values in one line
					xx | short
					""")
	void rejectsAnInvalidValue(String value, String why) {
		assertThat(TraceParent.isValid(value)).as(why).isFalse();
		assertThat(TraceParent.traceId(value)).as(why).isNull();
	}

	@Test
	void dropsTheSpacesAroundAValue() {
		String value = "00-" + TRACE + "-" + PARENT + "-01";
		assertThat(TraceParent.trim(" \t" + value + " ")).isEqualTo(value);
		assertThat(TraceParent.trim(value)).isSameAs(value);
		assertThat(TraceParent.trim(null)).isNull();
	}

	@Test
	void writesVersion00() {
		assertThat(TraceParent.format(TRACE, PARENT, true)).isEqualTo("00-" + TRACE + "-" + PARENT + "-01");
		assertThat(TraceParent.format(TRACE, PARENT, false)).isEqualTo("00-" + TRACE + "-" + PARENT + "-00");
		assertThatIllegalArgumentException().isThrownBy(() -> TraceParent.format(TRACE, "00f0", true));
	}

	@Test
	void generatesValidValuesWithNewIds() {
		Set<String> traces = new HashSet<>();
		Set<String> spans = new HashSet<>();
		for (int i = 0; i < 10_000; i++) {
			String value = TraceParent.generate(null, (i % 2) == 0);
			assertThat(TraceParent.isValid(value)).as(value).isTrue();
			assertThat(value).matches("00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]");
			assertThat(TraceParent.sampled(value)).isEqualTo((i % 2) == 0);
			traces.add(value.substring(3, 35));
			spans.add(value.substring(36, 52));
		}
		assertThat(traces).hasSize(10_000);
		assertThat(spans).hasSize(10_000);
	}

	@Test
	void continuesAGivenTraceUnderANewSpan() {
		String given = "cc-" + TRACE + "-" + PARENT + "-01-more";
		String value = TraceParent.generate(given, true);
		assertThat(value).startsWith("00-" + TRACE + "-").endsWith("-01").hasSize(55);
		assertThat(value.substring(36, 52)).isNotEqualTo(PARENT).matches("[0-9a-f]{16}");
	}

}
