package dev.tokengap.sse;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

/**
 * vLLM's per-request metrics ({@code --enable-per-request-metrics}, vLLM PR #46768) as
 * the scanner reads them from whole streams: the {@code metrics} object of the final
 * usage chunk (chat and text completions) and of the response in
 * {@code response.completed} (Responses API), and nowhere else.
 */
class SseEventScannerEngineMetricsTests {

	private static final String CHAT = """
			data: {"id":"chatcmpl-x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}

			data: {"id":"chatcmpl-x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hi"},"logprobs":null,"finish_reason":null}]}

			data: {"id":"chatcmpl-x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":""},"logprobs":null,"finish_reason":"stop","stop_reason":null}]}

			data: {"id":"chatcmpl-x","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":42,"completion_tokens":128,"total_tokens":170},"metrics":{"time_to_first_token_ms":85.2,"generation_time_ms":1240.5,"queue_time_ms":12.3,"mean_itl_ms":9.1,"tokens_per_second":103.2}}

			data: [DONE]

			""";

	private static final String COMPLETIONS = """
			data: {"id":"cmpl-x","object":"text_completion","created":1,"model":"m","choices":[{"index":0,"text":" Paris","logprobs":null,"finish_reason":null,"stop_reason":null,"prompt_token_ids":null,"token_ids":null}]}

			data: {"id":"cmpl-x","object":"text_completion","created":1,"model":"m","choices":[{"index":0,"text":"","logprobs":null,"finish_reason":"length","stop_reason":null}],"system_fingerprint":null}

			data: {"id":"cmpl-x","object":"text_completion","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":5,"total_tokens":21,"completion_tokens":16},"metrics":{"time_to_first_token_ms":3.25e1,"generation_time_ms":150,"queue_time_ms":1.5e-05,"mean_itl_ms":1E+1,"tokens_per_second":106.7,"num_preemptions":2}}

			data: [DONE]

			""";

	private static final String RESPONSES = """
			event: response.created
			data: {"response":{"id":"resp_x","status":"in_progress","usage":null,"metrics":null},"sequence_number":0,"type":"response.created"}

			event: response.output_text.delta
			data: {"content_index":0,"delta":"Hi","item_id":"msg_x","logprobs":[],"output_index":0,"sequence_number":1,"type":"response.output_text.delta"}

			event: response.completed
			data: {"response":{"id":"resp_x","output":[{"type":"message","content":[{"type":"output_text","text":"Hi"}]}],"status":"completed","usage":{"input_tokens":9,"output_tokens":1,"total_tokens":10},"metrics":{"time_to_first_token_ms":40.0,"generation_time_ms":0.0,"queue_time_ms":2.75,"mean_itl_ms":null,"tokens_per_second":null}},"sequence_number":2,"type":"response.completed"}

			""";

	/** n > 1: vLLM sends {@code "metrics":null}. */
	private static final String CHAT_N2 = """
			data: {"id":"chatcmpl-x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":1,"delta":{"content":"b"},"logprobs":null,"finish_reason":null}]}

			data: {"id":"chatcmpl-x","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":4,"completion_tokens":8,"total_tokens":12},"metrics":null}

			data: [DONE]

			""";

	/** No timing for the request: each field null. */
	private static final String NULL_FIELDS = """
			data: {"choices":[],"usage":{"completion_tokens":3},"metrics":{"time_to_first_token_ms":null,"generation_time_ms":null,"queue_time_ms":null,"mean_itl_ms":null,"tokens_per_second":null}}

			data: {"choices":[],"usage":{"completion_tokens":3},"metrics":{"time_to_first_token_ms":null,"generation_time_ms":12.5,"queue_time_ms":null,"mean_itl_ms":null,"tokens_per_second":null}}

			""";

	/**
	 * A {@code metrics} key in a delta, in a choice, in content text and in tool-call
	 * arguments.
	 */
	private static final String METRICS_ELSEWHERE = """
			data: {"choices":[{"index":0,"delta":{"content":"x","metrics":{"queue_time_ms":1.0}},"metrics":{"queue_time_ms":2.0}}]}

			data: {"choices":[{"index":0,"delta":{"content":"\\"metrics\\":{\\"queue_time_ms\\":3.0}"}}]}

			data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\\"metrics\\":{\\"queue_time_ms\\":4.0}}"}}]}}]}

			data: {"choices":[],"usage":{"completion_tokens":3,"metrics":{"queue_time_ms":5.0}}}

			event: response.completed
			data: {"response":{"usage":{"output_tokens":1,"metrics":{"queue_time_ms":6.0}},"output":[{"metrics":{"queue_time_ms":7.0}}]},"type":"response.completed"}

			""";

	/**
	 * The usage chunk cut before its end, then a valid one: only a well-formed event
	 * counts.
	 */
	private static final String MALFORMED = """
			data: {"choices":[],"usage":{"completion_tokens":3},"metrics":{"queue_time_ms":1.0}

			data: {"choices":[],"usage":{"completion_tokens":3},"metrics":{"queue_time_ms":1.0}}

			""";

	private final SseEventScanner scanner = new SseEventScanner();

	static Stream<Arguments> streams() {
		return Stream.of(
				arguments("chat", CHAT,
						List.of("PRELUDE", "CONTENT", "OTHER", "USAGE/128 engine(12.3 85.2 1240.5 9.1 -1)", "DONE")),
				arguments("completions", COMPLETIONS,
						List.of("CONTENT", "OTHER", "USAGE/16 engine(1.5E-5 32.5 150.0 10.0 2)", "DONE")),
				arguments("responses", RESPONSES, List.of("OTHER", "CONTENT", "DONE/1 engine(2.75 40.0 0.0 NaN -1)")),
				arguments("chat n=2", CHAT_N2, List.of("CONTENT@1", "USAGE/8", "DONE")),
				arguments("null fields", NULL_FIELDS, List.of("USAGE/3", "USAGE/3 engine(NaN NaN 12.5 NaN -1)")),
				arguments("metrics elsewhere", METRICS_ELSEWHERE,
						List.of("CONTENT", "CONTENT", "CONTENT", "USAGE/3", "DONE/1")),
				arguments("malformed", MALFORMED, List.of("OTHER", "USAGE/3 engine(1.0 NaN NaN NaN -1)")));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("streams")
	void readsTheEnginesMetricsFromTheEventThatCarriesThem(String name, String stream, List<String> expected) {
		assertThat(scan(bytes(stream))).isEqualTo(expected);
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("streams")
	void readsTheSameMetricsWhereverTheStreamIsSplit(String name, String stream, List<String> expected) {
		byte[] bytes = bytes(stream);
		for (int offset = 0; offset <= bytes.length; offset++) {
			this.scanner.reset();
			List<String> events = new ArrayList<>();
			feed(Arrays.copyOfRange(bytes, 0, offset), events);
			feed(Arrays.copyOfRange(bytes, offset, bytes.length), events);
			assertThat(events).as("split at %d", offset).isEqualTo(expected);
		}
	}

	@Test
	void startsWithoutEngineMetrics() {
		assertNoEngineMetrics();
	}

	@Test
	void forgetsTheEnginesMetricsOnReset() {
		feedCompletionsUpTo(bytes(COMPLETIONS).length - "data: [DONE]\n\n".length());
		assertThat(this.scanner.engineMetrics()).isTrue();
		this.scanner.reset();
		assertNoEngineMetrics();
	}

	@Test
	void scansEventsWithMetricsWithoutAllocating() {
		byte[] chat = bytes(CHAT);
		byte[] responses = bytes(RESPONSES);
		for (int warmUp = 0; warmUp < 200; warmUp++) {
			scanQuietly(chat);
			scanQuietly(responses);
		}
		long before = allocatedBytes();
		int reports = 0;
		for (int round = 0; round < 5000; round++) {
			reports += scanQuietly(chat) + scanQuietly(responses);
		}
		assertThat(reports).isEqualTo(10_000);
		// 40,000 events: allocating per event would show up as far more than this
		assertThat(allocatedBytes() - before).isLessThan(64 * 1024);
	}

	/** Feeds the first {@code length} bytes of the completions stream. */
	private void feedCompletionsUpTo(int length) {
		feed(Arrays.copyOf(bytes(COMPLETIONS), length), new ArrayList<>());
	}

	private int scanQuietly(byte[] bytes) {
		this.scanner.reset();
		int reports = 0;
		for (byte b : bytes) {
			if (this.scanner.accept(b) != null && this.scanner.engineMetrics()) {
				reports++;
			}
		}
		return reports;
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
				events.add(describe(kind));
			}
		}
	}

	private String describe(SseEventKind kind) {
		long choices = this.scanner.contentChoices();
		String name = (kind == SseEventKind.CONTENT && choices != 1) ? kind + "@" + Long.numberOfTrailingZeros(choices)
				: kind.name();
		long tokens = this.scanner.outputTokens();
		name = (tokens >= 0) ? name + "/" + tokens : name;
		if (!this.scanner.engineMetrics()) {
			assertNoEngineMetrics();
			return name;
		}
		return name + " engine(" + this.scanner.engineQueueMs() + " " + this.scanner.engineFirstTokenMs() + " "
				+ this.scanner.engineGenerationMs() + " " + this.scanner.engineMeanItlMs() + " "
				+ this.scanner.enginePreemptions() + ")";
	}

	private void assertNoEngineMetrics() {
		assertThat(this.scanner.engineMetrics()).isFalse();
		assertThat(this.scanner.engineQueueMs()).isNaN();
		assertThat(this.scanner.engineFirstTokenMs()).isNaN();
		assertThat(this.scanner.engineGenerationMs()).isNaN();
		assertThat(this.scanner.engineMeanItlMs()).isNaN();
		assertThat(this.scanner.enginePreemptions()).isEqualTo(-1);
	}

	private static long allocatedBytes() {
		return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean()).getCurrentThreadAllocatedBytes();
	}

	private static byte[] bytes(String stream) {
		return stream.getBytes(StandardCharsets.UTF_8);
	}

}
