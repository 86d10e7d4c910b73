package dev.tokengap.backend;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Parses the Prometheus text exposition format 0.0.4 and OpenMetrics 1.0 text, as
 * Python's {@code prometheus_client} (and so vLLM) writes them, into a callback per
 * sample.
 *
 * <p>
 * Names and labels reach the {@link SampleVisitor} as views onto the text, so a scrape
 * costs no object per line. {@code # HELP}, {@code # TYPE}, {@code # UNIT} and other
 * comments are skipped; {@code # EOF} ends an OpenMetrics exposition. A line that is not
 * a valid sample is skipped and counted, never thrown: a scrape must survive whatever the
 * engine sends.
 *
 * <p>
 * Not thread-safe: one parse at a time per instance (the views are reused).
 */
public final class PrometheusTextParser {

	/** The timestamp passed for a sample written without one. */
	public static final long NO_TIMESTAMP = Long.MIN_VALUE;

	private final TextSlice name = new TextSlice();

	private final SampleLabels labels = new SampleLabels();

	private final NumberScanner numbers = new NumberScanner();

	private long malformedLines;

	/**
	 * Visits every sample of the text in order.
	 * @param text an exposition (lines end with LF or CRLF)
	 * @param visitor receives the samples
	 * @return the number of malformed lines skipped in this text
	 */
	public int parse(CharSequence text, SampleVisitor visitor) {
		Objects.requireNonNull(text, "text");
		Objects.requireNonNull(visitor, "visitor");
		boolean openMetrics = endsWithEof(text);
		boolean eof = false;
		int malformed = 0;
		int length = text.length();
		for (int start = 0; start < length;) {
			int newline = lineEnd(text, start, length);
			int end = (newline > start && text.charAt(newline - 1) == '\r') ? newline - 1 : newline;
			int first = SampleLabels.skipBlanks(text, start, end);
			if (first < end) {
				if (eof) {
					malformed++;
				}
				else if (text.charAt(first) == '#') {
					eof = isEof(text, first, end);
				}
				else if (!sample(text, first, end, openMetrics, visitor)) {
					malformed++;
				}
			}
			start = newline + 1;
		}
		this.malformedLines += malformed;
		return malformed;
	}

	/**
	 * Parses the whole text into samples (for tests and tools; scrapes use the visitor).
	 * @param text an exposition
	 * @return the samples in order
	 */
	public List<Sample> parse(CharSequence text) {
		List<Sample> samples = new ArrayList<>();
		parse(text, (name, labels, value, timestamp) -> samples
			.add(new Sample(name.toString(), labels.toMap(), value, timestamp)));
		return samples;
	}

	/**
	 * The malformed lines skipped since this parser was created.
	 * @return the count over all parses
	 */
	public long malformedLines() {
		return this.malformedLines;
	}

	/**
	 * Reads {@code name[{labels}] value [timestamp] [# exemplar]}; false when malformed.
	 */
	private boolean sample(CharSequence text, int start, int end, boolean openMetrics, SampleVisitor visitor) {
		int p = start;
		if (!isNameStart(text.charAt(p), true)) {
			return false;
		}
		while (++p < end && isNameChar(text.charAt(p), true)) {
		}
		this.name.set(text, start, p);
		boolean wanted = visitor.wants(this.name);
		this.labels.clear();
		int brace = SampleLabels.skipBlanks(text, p, end);
		if (brace < end && text.charAt(brace) == '{') {
			p = this.labels.read(text, brace + 1, end);
			if (p < 0) {
				return false;
			}
		}
		int valueStart = SampleLabels.skipBlanks(text, p, end);
		if (valueStart == p || valueStart == end) {
			return false;
		}
		int valueEnd = tokenEnd(text, valueStart, end);
		if (!this.numbers.scan(text, valueStart, valueEnd, wanted)) {
			return false;
		}
		double value = this.numbers.value();
		long timestamp = NO_TIMESTAMP;
		p = SampleLabels.skipBlanks(text, valueEnd, end);
		if (p < end && text.charAt(p) != '#') {
			int timestampEnd = tokenEnd(text, p, end);
			timestamp = timestamp(text, p, timestampEnd, openMetrics);
			if (timestamp == NO_TIMESTAMP) {
				return false;
			}
			p = SampleLabels.skipBlanks(text, timestampEnd, end);
		}
		// What may follow is an OpenMetrics exemplar ("# {trace_id=...} 1.0"), which we
		// do not use.
		if (p < end && text.charAt(p) != '#') {
			return false;
		}
		if (wanted) {
			visitor.sample(this.name, this.labels, value, timestamp);
		}
		return true;
	}

	/**
	 * Milliseconds from a timestamp: integer milliseconds in the text format, float
	 * seconds in OpenMetrics (told apart by {@code # EOF}, or by a fraction or exponent
	 * in the number).
	 */
	private long timestamp(CharSequence text, int start, int end, boolean openMetrics) {
		if (!openMetrics) {
			long millis = integer(text, start, end);
			if (millis != NO_TIMESTAMP) {
				return millis;
			}
		}
		if (!this.numbers.scan(text, start, end, true)) {
			return NO_TIMESTAMP;
		}
		double seconds = this.numbers.value();
		return Double.isFinite(seconds) ? Math.round(seconds * 1000) : NO_TIMESTAMP;
	}

	private static long integer(CharSequence text, int start, int end) {
		int p = start;
		boolean negative = text.charAt(p) == '-';
		if (negative || text.charAt(p) == '+') {
			p++;
		}
		// 18 digits cannot overflow a long; real millisecond timestamps have 13.
		if (p == end || end - p > 18) {
			return NO_TIMESTAMP;
		}
		long value = 0;
		for (; p < end; p++) {
			char c = text.charAt(p);
			if (c < '0' || c > '9') {
				return NO_TIMESTAMP;
			}
			value = value * 10 + (c - '0');
		}
		return negative ? -value : value;
	}

	private static int lineEnd(CharSequence text, int start, int length) {
		if (text instanceof String string) {
			// String.indexOf is vectorised: comment lines (a third of vLLM's)
			// cost next to nothing.
			int newline = string.indexOf('\n', start);
			return (newline < 0) ? length : newline;
		}
		int p = start;
		while (p < length && text.charAt(p) != '\n') {
			p++;
		}
		return p;
	}

	private static int tokenEnd(CharSequence text, int start, int end) {
		int p = start;
		while (p < end && text.charAt(p) != ' ' && text.charAt(p) != '\t') {
			p++;
		}
		return p;
	}

	private static boolean isEof(CharSequence text, int start, int end) {
		int p = SampleLabels.skipBlanks(text, start + 1, end);
		return p > start + 1 && end - p >= 3 && text.charAt(p) == 'E' && text.charAt(p + 1) == 'O'
				&& text.charAt(p + 2) == 'F' && SampleLabels.skipBlanks(text, p + 3, end) == end;
	}

	/**
	 * Whether the last non-blank line is {@code # EOF}, which only OpenMetrics writes.
	 */
	private static boolean endsWithEof(CharSequence text) {
		int end = text.length();
		while (end > 0 && Character.isWhitespace(text.charAt(end - 1))) {
			end--;
		}
		int start = end;
		while (start > 0 && text.charAt(start - 1) != '\n') {
			start--;
		}
		start = SampleLabels.skipBlanks(text, start, end);
		return start < end && text.charAt(start) == '#' && isEof(text, start, end);
	}

	static boolean isNameStart(char c, boolean colon) {
		return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon && c == ':');
	}

	static boolean isNameChar(char c, boolean colon) {
		return isNameStart(c, colon) || (c >= '0' && c <= '9');
	}

	/**
	 * Receives the samples of an exposition. The name and labels are views valid only
	 * during the call: copy ({@code toString()}) what must outlive it.
	 */
	@FunctionalInterface
	public interface SampleVisitor {

		/**
		 * Receives one sample.
		 * @param name the sample name, e.g. {@code vllm:num_requests_running} or
		 * {@code vllm:e2e_request_latency_seconds_bucket}
		 * @param labels the sample's labels
		 * @param value the value (NaN and infinities included)
		 * @param timestampMillis the sample's timestamp in milliseconds, or
		 * {@link #NO_TIMESTAMP}
		 */
		void sample(CharSequence name, SampleLabels labels, double value, long timestampMillis);

		/**
		 * Lets the parser skip converting the value of samples the visitor would ignore;
		 * the line is still checked (and counted when malformed). Called once per sample
		 * line, before {@link #sample} for that same line, so a visitor may keep what it
		 * matched here.
		 * @param name the sample name
		 * @return whether {@link #sample} should be called for it
		 */
		default boolean wants(CharSequence name) {
			return true;
		}

	}

	/**
	 * One sample, copied out of the text.
	 *
	 * @param name the sample name
	 * @param labels label names to values, in the order written
	 * @param value the value
	 * @param timestampMillis the timestamp in milliseconds, or {@link #NO_TIMESTAMP}
	 */
	public record Sample(String name, Map<String, String> labels, double value, long timestampMillis) {

		/**
		 * A label's value.
		 * @param name the label name
		 * @return the value, or null when absent
		 */
		public String label(String name) {
			return this.labels.get(name);
		}

	}

}
