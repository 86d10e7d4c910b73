package dev.tokengap.sse;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Jazzer fuzz target for the scanner: any bytes, split anywhere. Regression mode (every
 * {@code ./mvnw test}) runs the inputs under {@code SseEventScannerFuzzTestsInputs/}; the
 * {@code fuzz-sse-scanner} surefire execution in {@code ./mvnw verify} fuzzes it for
 * {@code fuzz.duration}.
 * <p>
 * Input layout ({@link FuzzedDataProvider} takes integers from the end): the last byte is
 * the number of splits (0-7), the two bytes before each split its offset, the rest is the
 * stream. The seeds are the transcripts under {@code fixtures/sse/} with such a trailer
 * appended.
 */
class SseEventScannerFuzzTests {

	private static final byte[] BOM = { (byte) 0xEF, (byte) 0xBB, (byte) 0xBF };

	private static final byte[] DONE = { '[', 'D', 'O', 'N', 'E', ']' };

	@FuzzTest
	void givesTheSameFramedEventsHoweverTheStreamIsSplit(FuzzedDataProvider data) {
		int[] splits = new int[data.consumeInt(0, 7)];
		for (int i = 0; i < splits.length; i++) {
			splits[i] = data.consumeInt(0, 0xFFFF);
		}
		byte[] stream = data.consumeRemainingAsBytes();
		Arrays.setAll(splits, (i) -> splits[i] % (stream.length + 1));
		Arrays.sort(splits);

		List<String> whole = new ArrayList<>();
		List<Integer> dispatchOffsets = new ArrayList<>();
		feed(new SseEventScanner(), stream, 0, stream.length, whole, dispatchOffsets);

		// AssertJ only once a check has failed:
		// the fuzzer's executions per second are the budget.
		List<Integer> splitOffsets = new ArrayList<>();
		List<String> split = split(stream, splits, splitOffsets);
		if (!split.equals(whole) || !splitOffsets.equals(dispatchOffsets)) {
			assertThat(split).as("split at %s", Arrays.toString(splits)).isEqualTo(whole);
			assertThat(splitOffsets).as("offsets, split at %s", Arrays.toString(splits)).isEqualTo(dispatchOffsets);
		}
		List<String> expected = ReferenceFraming.frame(stream);
		if (!framingAgrees(framing(whole), expected)) {
			assertThat(framing(whole)).as("framing (%s: DATA or DONE)", ReferenceFraming.DATA_OR_END)
				.isEqualTo(expected);
		}
		assertThat(whole.size() <= ReferenceFraming.blankLines(stream)).as("at most one event per blank line").isTrue();
		for (int offset : dispatchOffsets) {
			if (!isLineEnd(stream[offset]) || offset == 0 || !isLineEnd(stream[offset - 1])) {
				throw new AssertionError("event reported at " + offset + ", not on the end of a blank line");
			}
		}
	}

	/**
	 * Feeds the chunks between the split offsets, to a scanner that first read the
	 * stream's own bytes backwards and was then reset: neither a chunk boundary nor
	 * leftover state may change what it reports.
	 */
	private static List<String> split(byte[] stream, int[] splits, List<Integer> dispatchOffsets) {
		SseEventScanner scanner = new SseEventScanner();
		byte[] reversed = stream.clone();
		for (int i = 0; i < reversed.length / 2; i++) {
			byte b = reversed[i];
			reversed[i] = reversed[reversed.length - 1 - i];
			reversed[reversed.length - 1 - i] = b;
		}
		feed(scanner, reversed, 0, reversed.length, new ArrayList<>(), new ArrayList<>());
		scanner.reset();
		List<String> events = new ArrayList<>();
		int from = 0;
		for (int to : splits) {
			scan(scanner, stream, from, to, events, dispatchOffsets);
			from = to;
		}
		scan(scanner, stream, from, stream.length, events, dispatchOffsets);
		return events;
	}

	/**
	 * Feeds the chunk through the bulk entry point, as the proxy does, and notes the
	 * index of the byte each event completed on.
	 */
	private static void scan(SseEventScanner scanner, byte[] stream, int from, int to, List<String> events,
			List<Integer> dispatchOffsets) {
		ByteBuffer bytes = ByteBuffer.wrap(stream);
		for (int i = from; i < to;) {
			i = scanner.scan(bytes, i, to);
			SseEventKind kind = scanner.completed();
			if (kind != null) {
				events.add(describe(scanner, kind));
				dispatchOffsets.add(i - 1);
			}
			else if (i != to) {
				throw new AssertionError("scan stopped at " + i + " before " + to + " with no event");
			}
		}
	}

	/**
	 * Feeds the bytes one at a time ({@link SseEventScanner#accept}); {@link #split}
	 * feeds them through {@link SseEventScanner#scan}, so the two entry points are held
	 * to the same events at the same bytes.
	 */
	private static void feed(SseEventScanner scanner, byte[] stream, int from, int to, List<String> events,
			List<Integer> dispatchOffsets) {
		for (int i = from; i < to; i++) {
			SseEventKind kind = scanner.accept(stream[i]);
			if (kind != null) {
				events.add(describe(scanner, kind));
				dispatchOffsets.add(i);
			}
		}
	}

	/**
	 * An event as both entry points must report it: its kind and everything the scanner
	 * read of it.
	 */
	private static String describe(SseEventScanner scanner, SseEventKind kind) {
		long tokens = scanner.outputTokens();
		if (tokens < -1) {
			throw new AssertionError("completion tokens " + tokens);
		}
		String event = (tokens >= 0) ? kind + "/" + tokens : kind.name();
		if (kind == SseEventKind.CONTENT) {
			event += "/choices " + Long.toBinaryString(scanner.contentChoices());
		}
		if (tokens >= 0) {
			event += "/choice " + scanner.tokensChoice();
		}
		if (scanner.engineMetrics()) {
			event += "/metrics " + scanner.engineQueueMs() + " " + scanner.engineFirstTokenMs() + " "
					+ scanner.engineGenerationMs() + " " + scanner.engineMeanItlMs() + " "
					+ scanner.enginePreemptions();
		}
		return event;
	}

	/**
	 * What the framing alone decides: COMMENT, DONE, or DATA for every kind the JSON
	 * decides.
	 */
	private static List<String> framing(List<String> events) {
		return events.stream().map((event) -> switch (event.split("/")[0]) {
			case "COMMENT", "DONE" -> event.split("/")[0];
			default -> "DATA";
		}).toList();
	}

	/**
	 * Whether the scanner's framing is the reference's: the same kinds, except that an
	 * event the reference calls {@link ReferenceFraming#DATA_OR_END} may be DONE (an end
	 * event of the Responses or Messages API, which its JSON decides) or DATA.
	 */
	private static boolean framingAgrees(List<String> scanned, List<String> expected) {
		if (scanned.size() != expected.size()) {
			return false;
		}
		for (int i = 0; i < scanned.size(); i++) {
			String kind = scanned.get(i);
			boolean agrees = expected.get(i).equals(ReferenceFraming.DATA_OR_END)
					? kind.equals("DATA") || kind.equals("DONE") : kind.equals(expected.get(i));
			if (!agrees) {
				return false;
			}
		}
		return true;
	}

	private static boolean isLineEnd(byte b) {
		return b == '\n' || b == '\r';
	}

	/**
	 * The event-stream framing as the scanner's Javadoc states it, written the obvious
	 * way (lines first, then blocks): a blank line ends a block that has any line; a
	 * block without a {@code data} field is a COMMENT; one whose joined data is
	 * {@code [DONE]} between blanks is DONE. A data block whose data or {@code event}
	 * value names an end event ({@code response.completed}, {@code response.incomplete},
	 * {@code message_stop}, or could through a JSON escape) is DATA_OR_END: its JSON, not
	 * the framing, decides whether it is DONE.
	 */
	private static final class ReferenceFraming {

		static final String DATA_OR_END = "DATA_OR_END";

		private static final List<byte[]> END_TYPES = List.of(ascii("response.completed"), ascii("response.incomplete"),
				ascii("message_stop"), ascii("\\"));

		static List<String> frame(byte[] stream) {
			List<String> events = new ArrayList<>();
			boolean blockHasLines = false;
			List<byte[]> data = new ArrayList<>();
			byte[] eventType = new byte[0];
			for (byte[] line : lines(stream)) {
				if (line.length == 0) {
					if (blockHasLines) {
						events.add(kind(data, eventType));
					}
					blockHasLines = false;
					data.clear();
					eventType = new byte[0];
					continue;
				}
				blockHasLines = true;
				int colon = indexOf(line, (byte) ':');
				byte[] name = Arrays.copyOf(line, (colon < 0) ? line.length : colon);
				int value = (colon < 0) ? line.length : colon + 1;
				if (value < line.length && line[value] == ' ') {
					value++;
				}
				if (Arrays.equals(name, ascii("data"))) {
					data.add(Arrays.copyOfRange(line, value, line.length));
				}
				else if (Arrays.equals(name, ascii("event"))) {
					eventType = Arrays.copyOfRange(line, value, line.length);
				}
			}
			return events;
		}

		/** Empty terminated lines: an upper bound on the events of any stream. */
		static int blankLines(byte[] stream) {
			return (int) lines(stream).stream().filter((line) -> line.length == 0).count();
		}

		/** The terminated lines (CR, LF or CRLF) after a leading byte order mark. */
		private static List<byte[]> lines(byte[] stream) {
			int start = (stream.length >= 3 && Arrays.equals(stream, 0, 3, BOM, 0, 3)) ? 3 : 0;
			List<byte[]> lines = new ArrayList<>();
			for (int i = start; i < stream.length; i++) {
				if (isLineEnd(stream[i])) {
					lines.add(Arrays.copyOfRange(stream, start, i));
					if (stream[i] == '\r' && i + 1 < stream.length && stream[i + 1] == '\n') {
						i++;
					}
					start = i + 1;
				}
			}
			return lines;
		}

		private static String kind(List<byte[]> data, byte[] eventType) {
			if (data.isEmpty()) {
				return "COMMENT";
			}
			ByteArrayOutputStream joined = new ByteArrayOutputStream();
			for (int i = 0; i < data.size(); i++) {
				if (i > 0) {
					joined.write('\n');
				}
				joined.writeBytes(data.get(i));
			}
			byte[] payload = joined.toByteArray();
			int from = 0;
			int to = payload.length;
			while (from < to && isBlank(payload[from])) {
				from++;
			}
			while (to > from && isBlank(payload[to - 1])) {
				to--;
			}
			if (Arrays.equals(payload, from, to, DONE, 0, DONE.length)) {
				return "DONE";
			}
			return (namesAnEnd(payload) || namesAnEnd(eventType)) ? DATA_OR_END : "DATA";
		}

		private static boolean namesAnEnd(byte[] bytes) {
			for (byte[] name : END_TYPES) {
				for (int i = 0; i + name.length <= bytes.length; i++) {
					if (Arrays.equals(bytes, i, i + name.length, name, 0, name.length)) {
						return true;
					}
				}
			}
			return false;
		}

		private static byte[] ascii(String s) {
			return s.getBytes(StandardCharsets.US_ASCII);
		}

		private static boolean isBlank(byte b) {
			return b == ' ' || b == '\t' || b == '\n';
		}

		private static int indexOf(byte[] line, byte b) {
			for (int i = 0; i < line.length; i++) {
				if (line[i] == b) {
					return i;
				}
			}
			return -1;
		}

	}

}
