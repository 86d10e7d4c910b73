package dev.tokengap.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.test.context.SpringBootTest;

import dev.tokengap.testsupport.PrometheusText;
import dev.tokengap.testsupport.ScriptedUpstream;
import dev.tokengap.testsupport.ScriptedUpstream.Step;
import dev.tokengap.testsupport.ScriptedUpstreamTests;
import dev.tokengap.testsupport.StreamingClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.awaitility.Awaitility.await;

/**
 * {@code tokengap bench --endpoint responses} over real HTTP through tokengap, in front
 * of a scripted Reactor Netty upstream that speaks vLLM's Responses stream and ends it
 * every way the contract tells apart: the request's shape, a success exactly where
 * tokengap counts {@code completed}, and the comparison reading only tokengap's
 * {@code endpoint="responses"} series while a chat stream runs through the same tokengap.
 * Against the simulator: {@link BenchIntegrationTests}.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=0", "tokengap.metrics.models=bench-resp,bench-resp-outcomes" })
class BenchResponsesIntegrationTests extends ScriptedUpstreamTests {

	private static final int PROMPTS = 4;

	private static final int TOKENS = 12;

	/**
	 * A chat stream through the same tokengap, inside the bench's window (the first
	 * Responses stream waits for it to be counted), must not reach the comparison.
	 */
	@Test
	void postsTheResponsesShapeAndComparesWithTokengapsResponsesSeries() throws Exception {
		CompletableFuture<Void> chatCounted = new CompletableFuture<>();
		upstream.handle((req, res) -> res.status(404).send());
		upstream.route("/v1/responses", (req, res) -> Mono.fromFuture(chatCounted)
			.then(Mono.defer(() -> ScriptedUpstream.play(res, responsesStream("completed", TOKENS), (nanos) -> {
			}))));
		upstream.route("/v1/chat/completions", (req, res) -> ScriptedUpstream.play(res, chatStream(), (nanos) -> {
		}));
		CompletableFuture<BenchCommand.Result> run = CompletableFuture
			.supplyAsync(() -> bench("bench-resp", "--num-prompts", PROMPTS, "--max-concurrency", 2, "--output-len",
					TOKENS, "--tokengap-metrics", "http://127.0.0.1:" + this.managementPort + "/actuator/prometheus"));
		await().atMost(Duration.ofSeconds(20)).until(() -> !upstream.received("/v1/responses").isEmpty());
		StreamingClient.record(proxy("/v1/chat/completions"), "{\"model\":\"bench-resp\",\"stream\":true}");
		await().atMost(Duration.ofSeconds(5)).until(() -> streams("bench-resp", "chat_completions", "completed") == 1);
		chatCounted.complete(null);
		BenchCommand.Result result = run.get(60, TimeUnit.SECONDS);

		for (ScriptedUpstream.Received received : upstream.received("/v1/responses")) {
			JsonNode body = JsonMapper.builder().build().readTree(received.body());
			assertThat(body.propertyNames()).containsExactly("model", "input", "max_output_tokens", "stream");
			assertThat(body.get("model").asString()).isEqualTo("bench-resp");
			assertThat(body.get("input").asString()).isNotBlank();
			assertThat(body.get("max_output_tokens").asInt()).isEqualTo(TOKENS);
			assertThat(body.get("stream").asBoolean()).isTrue();
		}
		BenchReport r = result.report();
		assertThat(r.completed).isEqualTo(PROMPTS);
		assertThat(r.failed).isZero();
		assertThat(r.outputTokens).as("response.usage.output_tokens").isEqualTo(PROMPTS * TOKENS);
		assertThat(r.itl.count()).isEqualTo(PROMPTS * (TOKENS - 1));
		assertThat(r.json().get("endpoint")).isEqualTo("/v1/responses");
		MetricsComparison.Row ttft = result.comparison().rows.get("TTFT");
		MetricsComparison.Row itl = result.comparison().rows.get("ITL");
		MetricsComparison.Row e2el = result.comparison().rows.get("E2EL");
		assertThat(ttft.tokengapCount()).isEqualTo(PROMPTS);
		assertThat(itl.tokengapCount()).isEqualTo(PROMPTS * (TOKENS - 1));
		assertThat(e2el.tokengapCount()).isEqualTo(PROMPTS);
		assertThat(itl.tokengapP50()).isCloseTo(itl.clientBucketedP50(), within(3.0));
		assertThat(streams("bench-resp", "responses", "completed")).isEqualTo(PROMPTS);
	}

	@Test
	void aRequestSucceedsExactlyWhenTokengapCountsItsStreamCompleted() {
		List<List<Step>> scripts = List.of(responsesStream("completed", 3), responsesStream("incomplete", 3),
				responsesStream("failed", 3), responsesStream("error", 3), responsesStream("none", 3),
				responsesStream("completed", 0));
		AtomicInteger next = new AtomicInteger();
		upstream.handle((req, res) -> res.status(404).send());
		upstream.route("/v1/responses", (req, res) -> ScriptedUpstream.play(res,
				scripts.get(next.getAndIncrement() % scripts.size()), (nanos) -> {
				}));
		BenchReport r = bench("bench-resp-outcomes", "--num-prompts", scripts.size(), "--max-concurrency", 1,
				"--output-len", 3)
			.report();
		assertThat(r.completed).isEqualTo(2);
		assertThat(r.failed).isEqualTo(4);
		assertThat(r.errors).isEqualTo(Map.of("in-band error event", 2,
				"stream ended without its end marker ([DONE], response.completed, message_stop)", 1, "no content event",
				1));
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(
					() -> assertThat(streams("bench-resp-outcomes", "responses", "completed")).isEqualTo(r.completed));
		assertThat(streams("bench-resp-outcomes", "responses", "engine_error")).isEqualTo(r.failed);
	}

	private BenchCommand.Result bench(String model, Object... options) {
		List<String> args = new ArrayList<>(List.of("--base-url", "http://127.0.0.1:" + this.port, "--endpoint",
				"responses", "--model", model, "--no-progress"));
		for (Object option : options) {
			args.add(String.valueOf(option));
		}
		return BenchCommand.execute(BenchOptions.parse(args.toArray(String[]::new)), System.err);
	}

	private double streams(String model, String endpoint, String outcome) {
		return PrometheusText.scrape(this.managementPort)
			.value("tokengap_streams_total", "model_name", model, "endpoint", endpoint, "outcome", outcome);
	}

	private String proxy(String path) {
		return "http://127.0.0.1:" + this.port + path;
	}

	/**
	 * vLLM's Responses stream: {@code response.created}, {@code response.in_progress},
	 * the output item and part, {@code deltas} text deltas 10 ms apart, then its end:
	 * {@code completed} or {@code incomplete} (a good end), {@code failed} or
	 * {@code error} (an in-band failure), or {@code none} (the body just ends).
	 */
	private static List<Step> responsesStream(String end, int deltas) {
		List<Step> steps = new ArrayList<>();
		int[] seq = { 0 };
		String inProgress = "\"response\":{\"id\":\"resp_1\",\"status\":\"in_progress\"}";
		steps.add(Step.of(0, event("response.created", inProgress, seq)));
		steps.add(Step.of(0, event("response.in_progress", inProgress, seq)));
		steps.add(Step.of(20, event("response.output_item.added",
				"\"item\":{\"id\":\"msg_1\",\"content\":[],\"role\":\"assistant\",\"type\":\"message\"},\"output_index\":0",
				seq)));
		for (int i = 0; i < deltas; i++) {
			steps.add(Step.of((i == 0) ? 0 : 10, event("response.output_text.delta",
					"\"content_index\":0,\"delta\":\"t" + i + " \",\"item_id\":\"msg_1\",\"output_index\":0", seq)));
		}
		String usage = "\"usage\":{\"input_tokens\":3,\"output_tokens\":" + deltas + ",\"total_tokens\":" + (deltas + 3)
				+ "}";
		switch (end) {
			case "completed", "incomplete" -> steps.add(Step.of(0, event("response." + end,
					"\"response\":{\"id\":\"resp_1\",\"status\":\"" + end + "\"," + usage + "}", seq)));
			case "failed" -> steps.add(Step.of(0, event("response.failed",
					"\"response\":{\"id\":\"resp_1\",\"status\":\"failed\",\"error\":{\"code\":\"server_error\"}}",
					seq)));
			case "error" ->
				steps.add(Step.of(0, event("error", "\"code\":\"server_error\",\"message\":\"boom\"", seq)));
			default -> {
				// the body ends without an end event
			}
		}
		return steps;
	}

	private static String event(String type, String fields, int[] seq) {
		return "event: " + type + "\ndata: {" + fields + ",\"sequence_number\":" + (seq[0]++) + ",\"type\":\"" + type
				+ "\"}\n\n";
	}

	private static List<Step> chatStream() {
		List<Step> steps = new ArrayList<>();
		for (int i = 0; i < 5; i++) {
			steps.add(Step.of(5, ScriptedUpstream.chatEvent("c" + i)));
		}
		steps.add(Step.of(0, "data: [DONE]\n\n"));
		return steps;
	}

}
