package dev.tokengap.backend;

import java.nio.charset.StandardCharsets;

import com.code_intelligence.jazzer.junit.FuzzTest;

import dev.tokengap.backend.PrometheusTextParser.SampleVisitor;
import dev.tokengap.metrics.BucketEdges;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Jazzer fuzz target for the exposition parser and the vLLM reader on top of it: any
 * scrape body. The parser's contract is that a malformed line is skipped and counted,
 * never thrown (only a null argument throws), so any exception here is a finding.
 * Regression mode (every {@code ./mvnw test}) runs the inputs under
 * {@code PrometheusTextParserFuzzTestsInputs/}: the real vLLM {@code /metrics} fixtures
 * and short expositions of each syntax; the {@code fuzz-exposition-parser} surefire
 * execution in {@code ./mvnw verify} mutates them for {@code fuzz.duration}.
 */
class PrometheusTextParserFuzzTests {

	/**
	 * Far above the few milliseconds a 16 KiB body takes on a loaded machine; a hang is
	 * libFuzzer's -timeout.
	 */
	private static final long MAX_NANOS_PER_INPUT = 5_000_000_000L;

	@FuzzTest
	void skipsAndCountsWhatItCannotParseAndNeverThrows(byte[] body) {
		long started = System.nanoTime();
		// As a scrape reads it (ScrapeBody.text()): malformed UTF-8 becomes U+FFFD.
		String text = new String(body, StandardCharsets.UTF_8);

		Fingerprint whole = new Fingerprint();
		int malformed = new PrometheusTextParser().parse(text, whole);
		assertThat(whole.samples + malformed).as("samples and malformed lines")
			.isLessThanOrEqualTo(nonBlankLines(text));

		// The CharSequence path (no String.indexOf) reads the same; a visitor that wants
		// nothing still has every line checked and counted.
		Fingerprint fromBuilder = new Fingerprint();
		assertThat(new PrometheusTextParser().parse(new StringBuilder(text), fromBuilder)).isEqualTo(malformed);
		if (fromBuilder.hash != whole.hash || fromBuilder.samples != whole.samples) {
			assertThat(new PrometheusTextParser().parse(new StringBuilder(text)))
				.isEqualTo(new PrometheusTextParser().parse(text));
		}
		assertThat(new PrometheusTextParser().parse(text, new WantsNothing())).isEqualTo(malformed);

		VllmMetricsReader reader = new VllmMetricsReader();
		reader.read(text, 0);
		BucketEdges edges = reader.readEdges(text);
		if (edges != null) {
			assertThat(edges.ttft()).isNotEmpty();
		}
		long elapsed = System.nanoTime() - started;
		assertThat(elapsed).as("nanoseconds for %d bytes", body.length).isLessThan(MAX_NANOS_PER_INPUT);
	}

	/**
	 * Lines as the parser splits them: on LF, less one CR before it (or at the very end),
	 * holding anything but spaces and tabs. A lone CR is not a blank (a fuzzer's finding
	 * in an earlier version of this count, which skipped every CR).
	 */
	private static int nonBlankLines(String text) {
		int lines = 0;
		for (int start = 0; start < text.length();) {
			int newline = text.indexOf('\n', start);
			int next = (newline < 0) ? text.length() : newline;
			int end = (next > start && text.charAt(next - 1) == '\r') ? next - 1 : next;
			for (int i = start; i < end; i++) {
				if (text.charAt(i) != ' ' && text.charAt(i) != '\t') {
					lines++;
					break;
				}
			}
			start = next + 1;
		}
		return lines;
	}

	/**
	 * Reads every view the visitor gets, within its bounds and during the visit, into a
	 * hash of the samples in order (a list of copied samples would cost the fuzzer most
	 * of its speed).
	 */
	private static final class Fingerprint implements SampleVisitor {

		long hash = 1;

		int samples;

		@Override
		public void sample(CharSequence name, SampleLabels labels, double value, long timestampMillis) {
			this.samples++;
			add(name);
			for (int i = 0; i < labels.size(); i++) {
				add(labels.name(i));
				add(labels.value(i));
			}
			labels.get("le");
			this.hash = this.hash * 31 + Double.doubleToLongBits(value);
			this.hash = this.hash * 31 + timestampMillis;
		}

		private void add(CharSequence chars) {
			for (int i = 0; i < chars.length(); i++) {
				this.hash = this.hash * 31 + chars.charAt(i);
			}
			this.hash = this.hash * 31 + chars.length();
		}

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
