package dev.tokengap.sse;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

class SseEventScannerTests {

	private static final int EVERY_OFFSET_LIMIT = 64 * 1024;

	/**
	 * The Responses API: pre-engine events, two reasoning deltas, three text deltas,
	 * completed.
	 */
	private static final String RESPONSES = "OTHER OTHER OTHER OTHER CONTENT CONTENT OTHER OTHER OTHER CONTENT CONTENT"
			+ " CONTENT OTHER OTHER OTHER DONE/5";

	private final SseEventScanner scanner = new SseEventScanner();

	static Stream<Arguments> transcripts() {
		String chat = "PRELUDE CONTENT CONTENT CONTENT CONTENT CONTENT OTHER USAGE/7 DONE";
		String error = "PRELUDE CONTENT CONTENT ERROR DONE";
		return Stream.of(arguments("chat-usage.sse", chat), arguments("chat-crlf.sse", chat),
				arguments("chat-cr.sse", chat),
				arguments("chat-continuous-usage.sse",
						"PRELUDE/0 CONTENT/1 CONTENT/4 CONTENT/6 CONTENT/9 OTHER/9 USAGE/9 DONE"),
				arguments("completions.sse", "CONTENT CONTENT CONTENT CONTENT CONTENT OTHER USAGE/6 DONE"),
				arguments("chat-reasoning.sse",
						"PRELUDE CONTENT CONTENT CONTENT CONTENT CONTENT CONTENT CONTENT CONTENT OTHER DONE"),
				arguments("chat-tool-calls.sse",
						"PRELUDE CONTENT CONTENT CONTENT CONTENT CONTENT CONTENT OTHER USAGE/22 DONE"),
				arguments("inband-error.sse", error), arguments("inband-error-legacy.sse", error),
				arguments("inband-error-object.sse", error),
				arguments("comments-and-fields.sse",
						"COMMENT PRELUDE CONTENT COMMENT CONTENT OTHER COMMENT COMMENT DONE"),
				arguments("multiline-data.sse", "CONTENT OTHER USAGE/2 DONE"),
				arguments("large-content.sse", "PRELUDE CONTENT OTHER USAGE/262144 DONE"),
				arguments("chat-n2.sse",
						"PRELUDE PRELUDE CONTENT CONTENT@1 CONTENT CONTENT@1 OTHER OTHER USAGE/8 DONE"),
				arguments("chat-reasoning-current.sse", "PRELUDE CONTENT CONTENT CONTENT CONTENT OTHER DONE"),
				arguments("chat-error-before-first-token.sse", "PRELUDE DONE"),
				arguments("transcription.sse", "CONTENT CONTENT OTHER USAGE/3 DONE"),
				arguments("responses.sse", RESPONSES), arguments("responses-data-only.sse", RESPONSES),
				arguments("responses-failed.sse",
						"OTHER OTHER OTHER OTHER CONTENT CONTENT OTHER OTHER OTHER CONTENT CONTENT ERROR"),
				arguments("responses-error-event.sse",
						"OTHER OTHER OTHER OTHER CONTENT CONTENT OTHER OTHER OTHER CONTENT CONTENT ERROR"),
				arguments("messages.sse",
						"OTHER OTHER CONTENT OTHER OTHER OTHER CONTENT CONTENT OTHER OTHER OTHER CONTENT OTHER USAGE/6 DONE"),
				arguments("messages-error.sse", "OTHER OTHER CONTENT OTHER OTHER OTHER CONTENT ERROR"));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("transcripts")
	void classifiesEveryEventOfATranscript(String fixture, String expected) {
		assertThat(String.join(" ", scan(fixture(fixture)))).isEqualTo(expected);
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("transcripts")
	void givesTheSameEventsWhereverTheStreamIsSplit(String fixture, String expected) {
		byte[] bytes = fixture(fixture);
		List<String> whole = scan(bytes);
		for (int offset : splitOffsets(bytes.length)) {
			this.scanner.reset();
			byte[] first = Arrays.copyOfRange(bytes, 0, offset);
			byte[] second = Arrays.copyOfRange(bytes, offset, bytes.length);
			List<String> events = new ArrayList<>();
			feed(first, events);
			feed(second, events);
			assertThat(events).as("split at %d", offset).isEqualTo(whole);
		}
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("transcripts")
	void theBulkEntryPointReportsWhatTheByteAtATimeOneDoesWhereverTheStreamIsSplit(String fixture, String expected) {
		byte[] bytes = fixture(fixture);
		List<String> byByte = new ArrayList<>();
		for (int i = 0; i < bytes.length; i++) {
			SseEventKind kind = this.scanner.accept(bytes[i]);
			if (kind != null) {
				byByte.add(i + " " + describe(this.scanner, kind));
			}
		}
		assertThat(byByte).hasSize(expected.split(" ").length);
		// an array, an array seen from an offset, and memory outside the heap (read a
		// window at a time)
		byte[] padded = new byte[bytes.length + 7];
		System.arraycopy(bytes, 0, padded, 7, bytes.length);
		ByteBuffer direct = ByteBuffer.allocateDirect(bytes.length).put(bytes).flip();
		for (ByteBuffer buffer : List.of(ByteBuffer.wrap(bytes), ByteBuffer.wrap(padded, 7, bytes.length).slice(),
				direct)) {
			for (int offset : splitOffsets(bytes.length)) {
				SseEventScanner bulk = new SseEventScanner();
				List<String> scanned = new ArrayList<>();
				int[] ends = { offset, bytes.length };
				int from = 0;
				for (int to : ends) {
					for (int i = from; i < to;) {
						i = bulk.scan(buffer, i, to);
						SseEventKind kind = bulk.completed();
						if (kind != null) {
							scanned.add((i - 1) + " " + describe(bulk, kind));
						}
					}
					from = to;
				}
				assertThat(scanned).as("%s split at %d", buffer, offset).isEqualTo(byByte);
			}
		}
	}

	/** Everything the scanner tells of an event. */
	private static String describe(SseEventScanner scanner, SseEventKind kind) {
		return kind + " tokens " + scanner.outputTokens() + " of " + scanner.tokensChoice() + " choices "
				+ scanner.contentChoices() + " metrics " + scanner.engineMetrics() + " " + scanner.engineQueueMs() + " "
				+ scanner.engineFirstTokenMs() + " " + scanner.engineGenerationMs() + " " + scanner.engineMeanItlMs()
				+ " " + scanner.enginePreemptions();
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("transcripts")
	void reportsEachEventOnTheByteThatEndsItsBlankLine(String fixture, String expected) {
		byte[] bytes = fixture(fixture);
		List<Integer> dispatchOffsets = new ArrayList<>();
		for (int i = 0; i < bytes.length; i++) {
			if (this.scanner.accept(bytes[i]) != null) {
				dispatchOffsets.add(i);
			}
		}
		assertThat(dispatchOffsets).hasSize(expected.split(" ").length).allSatisfy((offset) -> {
			byte end = bytes[offset];
			byte before = bytes[offset - 1];
			assertThat(end == '\n' || end == '\r').isTrue();
			assertThat(before == '\n' || before == '\r').isTrue();
		});
	}

	@ParameterizedTest
	@CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
			data: [DONE]\\n\\n                                  | DONE
			data:[DONE]\\n\\n                                   | DONE
			data:   [DONE]  \\n\\n                              | DONE
			data: [DONE]\\r\\n\\r\\n                            | DONE
			data: [DONE]\\r\\r                                  | DONE
			data: [DONE]\\n\\r                                  | DONE
			data: [DONE\\n\\n                                   | OTHER
			data: [DONE]x\\n\\n                                 | OTHER
			data: [ DONE]\\n\\n                                 | OTHER
			data: [done]\\n\\n                                  | OTHER
			data:\\ndata: [DONE]\\n\\n                          | DONE
			data: [DO\\ndata: NE]\\n\\n                         | OTHER
			data: {"choices":[{"delta":\\ndata: {"content":"x"}}]}\\n\\n | CONTENT
			data\\n\\n                                          | OTHER
			data:\\n\\n                                         | OTHER
			data: \\n\\n                                        | OTHER
			: keep-alive\\n\\n                                  | COMMENT
			:\\n\\n                                             | COMMENT
			event: ping\\n\\n                                   | COMMENT
			id: 7\\nretry: 10\\n\\n                             | COMMENT
			id\\n\\n                                            | COMMENT
			Data: [DONE]\\n\\n                                  | COMMENT
			datas: [DONE]\\n\\n                                 | COMMENT
			dat: [DONE]\\n\\n                                   | COMMENT
			data : [DONE]\\n\\n                                 | COMMENT
			: comment\\ndata: [DONE]\\n: comment\\n\\n          | DONE
			event: error\\ndata: [DONE]\\n\\n                   | DONE
			\\n\\n\\r\\n\\rdata: [DONE]\\n\\n                   | DONE
			\\uFEFFdata: [DONE]\\n\\n                           | DONE
			""")
	void framesEventsAsTheEventStreamSpecSays(String stream, String expected) {
		assertThat(scan(unescape(stream))).containsExactly(expected);
	}

	@Test
	void treatsCrLfSplitAcrossCallsAsOneLineEnd() {
		feedText("data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\r");
		assertThat(this.scanner.accept((byte) '\n')).isNull();
		assertThat(this.scanner.accept((byte) '\r')).isEqualTo(SseEventKind.CONTENT);
		assertThat(this.scanner.accept((byte) '\n')).isNull();
		assertThat(this.scanner.accept((byte) '\n')).isNull();
	}

	@Test
	void ignoresBlankLinesThatEndNoEvent() {
		assertThat(scan(unescape("\\n\\r\\n\\r\\r\\n\\n"))).isEmpty();
	}

	@Test
	void neverReportsAnEventThatTheStreamLeavesUnterminated() {
		assertThat(scan(unescape("data: [DONE]\\n"))).isEmpty();
		assertThat(scan(unescape("data: [DONE]"))).isEmpty();
	}

	@Test
	void treatsAByteOrderMarkOnlyAtTheStartOfTheStream() {
		assertThat(scan(unescape("data: [DONE]\\n\\n\\uFEFFdata: [DONE]\\n\\n"))).containsExactly("DONE", "COMMENT");
	}

	@Test
	void treatsAPartialByteOrderMarkAsPartOfTheFieldName() {
		byte[] stream = unescape("?data: [DONE]\\n\\n");
		stream[0] = (byte) 0xEF;
		assertThat(scan(stream)).containsExactly("COMMENT");
	}

	@Test
	void reportsCompletionTokensOnlyForTheEventThatCarriedThem() {
		feedText("data: {\"choices\":[],\"usage\":{\"completion_tokens\":42}}\n");
		assertThat(this.scanner.accept((byte) '\n')).isEqualTo(SseEventKind.USAGE);
		assertThat(this.scanner.outputTokens()).isEqualTo(42);
		feedText("data: [DONE]\n");
		assertThat(this.scanner.accept((byte) '\n')).isEqualTo(SseEventKind.DONE);
		assertThat(this.scanner.outputTokens()).isEqualTo(-1);
	}

	@Test
	void startsWithoutCompletionTokens() {
		assertThat(this.scanner.outputTokens()).isEqualTo(-1);
	}

	@Test
	void forgetsAHalfReadEventOnReset() {
		feedText("data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n");
		this.scanner.reset();
		assertThat(scan(unescape("\\ndata: [DONE]\\n\\n"))).containsExactly("DONE");
	}

	@Test
	void forgetsThePreviousEventsCompletionTokensOnReset() {
		scan(unescape("data: {\"usage\":{\"completion_tokens\":5}}\\n\\n"));
		assertThat(this.scanner.outputTokens()).isEqualTo(5);
		this.scanner.reset();
		assertThat(this.scanner.outputTokens()).isEqualTo(-1);
	}

	@Test
	@Timeout(30)
	void survivesRandomBytes() {
		Random random = new Random(20260101);
		byte[] alphabet = unescape(
				"data:{}[]\\\"\\\\,:\\n\\r \\t0123456789-+.eEtrufalsn[DONE]choicesdeltacontentusage");
		for (int round = 0; round < 3000; round++) {
			byte[] bytes = new byte[random.nextInt(4096)];
			for (int i = 0; i < bytes.length; i++) {
				bytes[i] = (round % 3 == 0) ? (byte) random.nextInt(256) : alphabet[random.nextInt(alphabet.length)];
			}
			this.scanner.reset();
			feed(bytes, new ArrayList<>());
		}
		this.scanner.reset();
		assertThat(scan(fixture("chat-usage.sse"))).containsExactly("PRELUDE", "CONTENT", "CONTENT", "CONTENT",
				"CONTENT", "CONTENT", "OTHER", "USAGE/7", "DONE");
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("transcripts")
	@Timeout(30)
	void survivesDamagedTranscripts(String fixture, String expected) {
		byte[] original = fixture(fixture);
		if (original.length > EVERY_OFFSET_LIMIT) {
			return;
		}
		Random random = new Random(fixture.hashCode());
		for (int round = 0; round < 500; round++) {
			byte[] bytes = original.clone();
			for (int damage = 1 + random.nextInt(8); damage > 0; damage--) {
				bytes[random.nextInt(bytes.length)] = (byte) random.nextInt(256);
			}
			this.scanner.reset();
			List<String> events = new ArrayList<>();
			feed(bytes, events);
			assertThat(events.size()).isLessThanOrEqualTo(bytes.length / 2);
		}
	}

	@Test
	void scansWithoutAllocating() {
		byte[] large = fixture("large-content.sse");
		byte[] small = fixture("comments-and-fields.sse");
		for (int warmUp = 0; warmUp < 3; warmUp++) {
			scanQuietly(large);
			scanQuietly(small);
		}
		long before = allocatedBytes();
		for (int round = 0; round < 2; round++) {
			scanQuietly(large);
		}
		for (int round = 0; round < 2000; round++) {
			scanQuietly(small);
		}
		// 18,000 events and 2.3 MB: allocating per event or per byte would show up as far
		// more than this
		assertThat(allocatedBytes() - before).isLessThan(64 * 1024);
	}

	private int scanQuietly(byte[] bytes) {
		this.scanner.reset();
		int events = 0;
		for (byte b : bytes) {
			if (this.scanner.accept(b) != null) {
				events++;
			}
		}
		return events;
	}

	private static long allocatedBytes() {
		return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean()).getCurrentThreadAllocatedBytes();
	}

	private List<String> scan(byte[] bytes) {
		List<String> events = new ArrayList<>();
		feed(bytes, events);
		return events;
	}

	private void feed(byte[] bytes, List<String> events) {
		for (byte b : bytes) {
			SseEventKind kind = this.scanner.accept(b);
			if (kind != null) {
				long tokens = this.scanner.outputTokens();
				long choices = this.scanner.contentChoices();
				String name = (kind == SseEventKind.CONTENT && choices != 1) ? kind + "@" + choiceList(choices)
						: kind.name();
				events.add((tokens >= 0) ? name + "/" + tokens : name);
			}
		}
	}

	private static String choiceList(long choices) {
		StringBuilder list = new StringBuilder();
		for (int i = 0; i < 64; i++) {
			if ((choices & (1L << i)) != 0) {
				list.append((list.length() > 0) ? "," : "").append(i);
			}
		}
		return list.toString();
	}

	private void feedText(String text) {
		for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
			assertThat(this.scanner.accept(b)).isNull();
		}
	}

	/**
	 * Every offset for transcripts up to 64 KiB; for the 1 MiB one, every offset near its
	 * ends and near each event boundary would be as good, so a seeded sample is used.
	 */
	private static int[] splitOffsets(int length) {
		if (length <= EVERY_OFFSET_LIMIT) {
			int[] offsets = new int[length + 1];
			Arrays.setAll(offsets, (i) -> i);
			return offsets;
		}
		Random random = new Random(length);
		int[] offsets = new int[200];
		Arrays.setAll(offsets, (i) -> (i < 100) ? i : random.nextInt(length + 1));
		return offsets;
	}

	static byte[] fixture(String name) {
		try (InputStream in = SseEventScannerTests.class.getResourceAsStream("/fixtures/sse/" + name)) {
			assertThat(in).as(name).isNotNull();
			return in.readAllBytes();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * The stream in a table cell, with {@code \n}, {@code \r} and {@code \uFEFF} written
	 * as escapes.
	 */
	private static byte[] unescape(String cell) {
		return cell.strip()
			.replace("\\n", "\n")
			.replace("\\r", "\r")
			.replace("\\t", "\t")
			.replace("\\uFEFF", "\uFEFF")
			.replace("\\\"", "\"")
			.replace("\\\\", "\\")
			.getBytes(StandardCharsets.UTF_8);
	}

}
