package dev.tokengap.backend;

import java.nio.charset.StandardCharsets;
import java.util.List;

import com.code_intelligence.jazzer.junit.FuzzTest;

import dev.tokengap.backend.PrometheusTextParser.Sample;
import dev.tokengap.backend.PrometheusTextParser.SampleVisitor;
import dev.tokengap.metrics.BucketEdges;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Jazzer fuzz target for the exposition parser and the vLLM reader on top of it: any scrape body.
 * The parser's contract is that a malformed line is skipped and counted, never thrown (only a
 * null argument throws), so any exception here is a finding. Regression mode (every
 * {@code ./mvnw test}) runs the inputs under {@code PrometheusTextParserFuzzTestsInputs/}: the
 * real vLLM {@code /metrics} fixtures and short expositions of each syntax; the
 * {@code fuzz-exposition-parser} surefire execution in {@code ./mvnw verify} mutates them for
 * {@code fuzz.duration}.
 */
class PrometheusTextParserFuzzTests {

	/** Far above the few milliseconds a 16 KiB body takes on a loaded machine; a hang is libFuzzer's -timeout. */
	private static final long MAX_NANOS_PER_INPUT = 5_000_000_000L;

	@FuzzTest
	void skipsAndCountsWhatItCannotParseAndNeverThrows(byte[] body) {
		long started = System.nanoTime();
		// As a scrape reads it (ScrapeBody.text()): malformed UTF-8 becomes U+FFFD.
		String text = new String(body, StandardCharsets.UTF_8);

		PrometheusTextParser parser = new PrometheusTextParser();
		List<Sample> samples = parser.parse(text);
		long malformed = parser.malformedLines();
		long lines = nonBlankLines(text);
		assertThat(samples.size() + malformed).as("samples and malformed lines").isLessThanOrEqualTo(lines);

		// The CharSequence path (no String.indexOf) reads the same; a visitor that wants nothing
		// still has every line checked and counted.
		PrometheusTextParser other = new PrometheusTextParser();
		List<Sample> fromBuilder = other.parse(new StringBuilder(text));
		if (!fromBuilder.equals(samples)) {
			assertThat(fromBuilder).isEqualTo(samples);
		}
		assertThat(other.parse(text, new WantsNothing())).isEqualTo(malformed);
		readLabelsThroughTheViews(text);

		VllmMetricsReader reader = new VllmMetricsReader();
		reader.read(text, 0);
		BucketEdges edges = reader.readEdges(text);
		if (edges != null) {
			assertThat(edges.ttft()).isNotEmpty();
		}
		long elapsed = System.nanoTime() - started;
		assertThat(elapsed).as("nanoseconds for %d bytes", body.length).isLessThan(MAX_NANOS_PER_INPUT);
	}

	/** Every view the visitor gets must be readable within its bounds during the visit. */
	private static void readLabelsThroughTheViews(String text) {
		new PrometheusTextParser().parse(text, (name, labels, value, timestamp) -> {
			for (int i = 0; i < labels.size(); i++) {
				touch(labels.name(i));
				touch(labels.value(i));
			}
			labels.get("le");
			touch(name);
		});
	}

	private static void touch(CharSequence chars) {
		for (int i = 0; i < chars.length(); i++) {
			chars.charAt(i);
		}
		chars.toString();
	}

	/** Lines as the parser splits them (on LF) that hold anything but blanks (space, tab, a final CR). */
	private static long nonBlankLines(String text) {
		long lines = 0;
		boolean content = false;
		for (int i = 0; i <= text.length(); i++) {
			char c = (i < text.length()) ? text.charAt(i) : '\n';
			if (c == '\n') {
				lines += content ? 1 : 0;
				content = false;
			}
			else if (c != ' ' && c != '\t' && c != '\r') {
				content = true;
			}
		}
		return lines;
	}

	private static final class WantsNothing implements SampleVisitor {

		@Override
		public boolean wants(CharSequence name) {
			return false;
		}

		@Override
		public void sample(CharSequence name, SampleLabels labels, double value, long timestampMillis) {
			throw new AssertionError("sample() called for an unwanted name: " + name);
		}

	}

}
