package dev.tokengap.sse;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Array;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The memo of event starts: an event that starts with the bytes the stream's events
 * shared is read on from the state those bytes leave, and the scanner reports exactly
 * what reading every byte reports, however the events differ after the shared start,
 * change shape, or are split.
 */
class EventStartMemoTests {

	private static final String CHAT = "data: {\"id\":\"chatcmpl-8b7a6c1f4e2d4c9a\",\"object\":\"chat.completion.chunk\","
			+ "\"created\":1748945123,\"model\":\"meta-llama/Llama-3.1-8B-Instruct\",\"choices\":[{\"index\":0,";

	private static final String CONTENT_START = CHAT + "\"delta\":{\"content\":\"";

	@Test
	void learnsTheStartUpToTheTokenTextAndSkipsItFromThenOn() {
		SseEventScanner scanner = new SseEventScanner();
		List<String> events = new ArrayList<>();
		for (String token : List.of("Hello", " world", " the", " cat")) {
			scan(scanner, content(token), events);
		}
		assertThat(events).containsOnly("CONTENT/choices 1");
		byte[] next = ascii(content(" sat"));
		assertThat(scanner.memo().match(next, 0, next.length)).as("the learned prefix")
			.isEqualTo(CONTENT_START.length());
		scan(scanner, content(" sat"), events);
		scan(scanner, CHAT + "\"delta\":{\"content\":\"\"},\"logprobs\":null,\"finish_reason\":\"stop\"}]}\n\n",
				events);
		scan(scanner, CHAT + "\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\"}}]}}]}\n\n",
				events);
		scan(scanner, "data: {\"error\":{\"message\":\"engine died\"}}\n\n", events);
		assertThat(events).containsExactly("CONTENT/choices 1", "CONTENT/choices 1", "CONTENT/choices 1",
				"CONTENT/choices 1", "CONTENT/choices 1", "OTHER", "CONTENT/choices 1", "ERROR");
	}

	@Test
	void anEventThatStartsLikeTheOthersButBreaksOffIsNotContent() {
		SseEventScanner scanner = new SseEventScanner();
		List<String> events = new ArrayList<>();
		for (int i = 0; i < 4; i++) {
			scan(scanner, content(" tok" + i), events);
		}
		scan(scanner, CONTENT_START + " tok\n\n", events);
		scan(scanner, CONTENT_START + "\\q\"}}]}\n\n", events);
		scan(scanner, content(" back"), events);
		assertThat(events).containsExactly("CONTENT/choices 1", "CONTENT/choices 1", "CONTENT/choices 1",
				"CONTENT/choices 1", "OTHER", "OTHER", "CONTENT/choices 1");
	}

	@Test
	void aStreamWithoutAStableStartGivesTheMemoUp() {
		SseEventScanner scanner = new SseEventScanner();
		int events = 0;
		while (events < 200 && scanner.memo().active()) {
			// each pair of events shares a long start, which the next pair breaks early
			char letter = (char) ('a' + (events / 2) % 26);
			scan(scanner, "data: {\"pair\":\"" + String.valueOf(letter).repeat(30) + "\",\"v\":" + events + "}\n\n",
					new ArrayList<>());
			events++;
		}
		// the stream's first event is not kept (its first bytes may be a byte order
		// mark),
		// the second is, and from then on each pair learns a prefix, one more than
		// allowed
		assertThat(events).as("events read until the memo gave up").isEqualTo(2 + 2 * (EventStartMemo.MAX_BUILDS + 1));
		assertThat(scanner.memo().active()).isFalse();
		List<String> after = new ArrayList<>();
		scan(scanner, content(" still read"), after);
		assertThat(after).containsExactly("CONTENT/choices 1");
	}

	static Stream<String> transcripts() {
		return Stream.of("chat-continuous-usage.sse", "chat-cr.sse", "chat-crlf.sse", "chat-n2.sse",
				"chat-reasoning-current.sse", "chat-reasoning.sse", "chat-tool-calls.sse", "chat-usage.sse",
				"comments-and-fields.sse", "completions.sse", "inband-error.sse", "large-content.sse", "messages.sse",
				"multiline-data.sse", "responses.sse", "responses-failed.sse", "transcription.sse");
	}

	/**
	 * Each transcript, its events repeated and their token texts changed, split at random
	 * points: the memo (the bulk path) reports what a byte at a time reports, at the same
	 * bytes.
	 */
	@ParameterizedTest
	@MethodSource("transcripts")
	void reportsWhatReadingEveryByteReportsOnEveryTranscriptSplitAnywhere(String name) throws IOException {
		byte[] transcript = fixture(name);
		byte[] stream = repeatedWithOtherTokens(transcript);
		List<String> expected = new ArrayList<>();
		SseEventScanner reference = new SseEventScanner();
		for (int i = 0; i < stream.length; i++) {
			SseEventKind kind = reference.accept(stream[i]);
			if (kind != null) {
				expected.add(i + " " + describe(reference, kind));
			}
		}
		Random random = new Random(name.hashCode());
		for (int round = 0; round < 20; round++) {
			SseEventScanner scanner = new SseEventScanner();
			List<String> events = new ArrayList<>();
			int from = 0;
			while (from < stream.length) {
				int to = (round == 0) ? stream.length : Math.min(stream.length, from + 1 + random.nextInt(400));
				for (int i = from; i < to;) {
					i = scanner.scan(stream, i, to);
					if (scanner.completed() != null) {
						events.add((i - 1) + " " + describe(scanner, scanner.completed()));
					}
				}
				from = to;
			}
			assertThat(events).as("%s, round %d", name, round).isEqualTo(expected);
		}
	}

	/**
	 * Every field of a scanner's state within an event is copied: a field added later and
	 * not copied would make the memo restore a different state than reading gives.
	 */
	@Test
	void copiesEveryFieldOfAnEventsState() throws Exception {
		SseEventScanner source = new SseEventScanner();
		byte[] bytes = ascii("event: response.output_text.delta\ndata: {\"type\":\"x\",\"choices\":[{\"index\":3,"
				+ "\"delta\":{\"content\":\"ab\\u00e9\",\"tool_calls\":[1,-2.5e3,true,nul");
		for (byte b : bytes) {
			source.accept(b);
		}
		SseEventScanner copy = new SseEventScanner();
		Method method = SseEventScanner.class.getDeclaredMethod("copyEventFrom", SseEventScanner.class);
		method.setAccessible(true);
		method.invoke(copy, source);
		// what the last completed event carried, and the stream's memo, are not an
		// event's state
		Set<String> notCopied = Set.of("memo", "completed", "outputTokens", "contentChoices", "tokensChoice",
				"engineMetrics", "engineQueueMs", "engineFirstTokenMs", "engineGenerationMs", "engineMeanItlMs",
				"enginePreemptions");
		assertSameState(source, copy, notCopied, "scanner");
	}

	private static void assertSameState(Object source, Object copy, Set<String> notCopied, String path)
			throws IllegalAccessException {
		for (Field field : source.getClass().getDeclaredFields()) {
			if (Modifier.isStatic(field.getModifiers()) || notCopied.contains(field.getName())) {
				continue;
			}
			field.setAccessible(true);
			Object expected = field.get(source);
			Object actual = field.get(copy);
			String name = path + "." + field.getName();
			if (expected != null && expected.getClass().getPackageName().equals("dev.tokengap.sse")) {
				// the tokenizer's classifier is the scanner's, checked as such
				assertSameState(expected, actual, Set.of("paths"), name);
			}
			else if (expected != null && expected.getClass().isArray()) {
				assertThat(Array.getLength(actual)).as(name).isEqualTo(Array.getLength(expected));
				for (int i = 0; i < Array.getLength(expected); i++) {
					assertThat(Array.get(actual, i)).as(name + "[" + i + "]").isEqualTo(Array.get(expected, i));
				}
			}
			else {
				assertThat(actual).as(name).isEqualTo(expected);
			}
		}
	}

	/** The transcript three times, each event's letters shifted in the later copies. */
	private static byte[] repeatedWithOtherTokens(byte[] transcript) {
		String text = new String(transcript, StandardCharsets.ISO_8859_1);
		StringBuilder stream = new StringBuilder(text);
		for (int copy = 1; copy < 3; copy++) {
			stream.append(text.replace("the", (copy == 1) ? "thy" : "tha").replace(" a", " o"));
		}
		return stream.toString().getBytes(StandardCharsets.ISO_8859_1);
	}

	private static String content(String token) {
		return CONTENT_START + token + "\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n";
	}

	private static void scan(SseEventScanner scanner, String event, List<String> events) {
		byte[] bytes = ascii(event);
		for (int i = 0; i < bytes.length;) {
			i = scanner.scan(bytes, i, bytes.length);
			if (scanner.completed() != null) {
				events.add(describe(scanner, scanner.completed()));
			}
		}
	}

	private static String describe(SseEventScanner scanner, SseEventKind kind) {
		String event = kind.name();
		if (kind == SseEventKind.CONTENT) {
			event += "/choices " + Long.toBinaryString(scanner.contentChoices());
		}
		if (scanner.outputTokens() >= 0) {
			event += "/tokens " + scanner.outputTokens() + " of " + scanner.tokensChoice();
		}
		if (scanner.engineMetrics()) {
			event += "/metrics " + scanner.engineQueueMs() + " " + scanner.engineFirstTokenMs() + " "
					+ scanner.engineGenerationMs() + " " + scanner.engineMeanItlMs() + " "
					+ scanner.enginePreemptions();
		}
		return event;
	}

	private static byte[] fixture(String name) throws IOException {
		try (InputStream in = EventStartMemoTests.class.getResourceAsStream("/fixtures/sse/" + name)) {
			return in.readAllBytes();
		}
	}

	private static byte[] ascii(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

}
