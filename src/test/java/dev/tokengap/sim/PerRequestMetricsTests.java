package dev.tokengap.sim;

import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

import dev.tokengap.testsupport.StreamingClient;

import static dev.tokengap.sim.FastSimulator.CHAT;
import static dev.tokengap.sim.FastSimulator.COMPLETIONS;
import static dev.tokengap.sim.FastSimulator.RESPONSES;
import static dev.tokengap.sim.FastSimulator.chatBody;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * vLLM's per-request {@code metrics} ({@code tokengap.sim.per-request-metrics}) over real
 * HTTP: where vLLM writes the object, when it suppresses it, and that its times are the
 * engine's, so a token held back after the engine (an {@code X-Sim-Stall}) is not in
 * them.
 */
class PerRequestMetricsTests {

	private static final String USAGE = ",\"stream_options\":{\"include_usage\":true}";

	private static final List<String> FIELDS = List.of("time_to_first_token_ms", "generation_time_ms", "queue_time_ms",
			"mean_itl_ms", "tokens_per_second");

	private static final double MS = TimeUnit.MILLISECONDS.toNanos(1);

	private static SimulatorServer server;

	private static StreamingClient client;

	@BeforeAll
	static void start() {
		server = FastSimulator.start(FastSimulator.properties().perRequestMetrics(true).build());
		client = FastSimulator.client(server);
	}

	@AfterAll
	static void stop() {
		server.close();
	}

	@Test
	void theObjectRidesOnTheUsageChunkAfterTheUsage() {
		List<StreamingClient.Event> events = client.post(CHAT, chatBody("measure me", 6, true, USAGE)).events();
		StreamingClient.Event usage = events.get(events.size() - 2);
		assertThat(usage.json().path("choices").isEmpty()).isTrue();
		assertThat(usage.json().propertyNames()).containsExactly("id", "object", "created", "model", "choices", "usage",
				"metrics");
		assertThat(usage.json().path("metrics").propertyNames()).containsExactlyElementsOf(FIELDS);
		assertThat(usage.data()).containsPattern("\"completion_tokens\":6},\"metrics\":\\{\"time_to_first_token_ms\":"
				+ "\\d+\\.\\d+(e-\\d\\d)?,\"generation_time_ms\":\\d+\\.\\d+");
		assertThat(events.subList(0, events.size() - 2)).noneMatch((event) -> event.data().contains("metrics"));
		JsonNode completions = usageChunk(
				client.post(COMPLETIONS, "{\"prompt\":\"measure me\",\"max_tokens\":4,\"stream\":true" + USAGE + "}"));
		assertThat(completions.propertyNames()).containsExactly("id", "object", "created", "model", "choices", "usage",
				"metrics");
	}

	@Test
	void aStreamWithoutIncludeUsageHasNoUsageChunkAndSoNoMetrics() {
		assertThat(client.post(CHAT, chatBody("no usage", 4)).body()).doesNotContain("metrics");
	}

	@Test
	void withoutTheFlagNoResponseHasTheKey() {
		try (SimulatorServer off = FastSimulator.start()) {
			StreamingClient plain = FastSimulator.client(off);
			assertThat(plain.post(CHAT, chatBody("off", 4, true, USAGE)).body()).doesNotContain("metrics");
			assertThat(plain.post(CHAT, chatBody("off", 4, false, "")).json().has("metrics")).isFalse();
			assertThat(plain.post(RESPONSES, responsesBody(true, "")).body()).doesNotContain("metrics");
		}
	}

	@Test
	void twoChoicesOrSeveralPromptsSuppressTheMetrics() {
		JsonNode whole = client.post(CHAT, chatBody("two", 3, false, ",\"n\":2")).json();
		assertThat(whole.has("metrics")).isTrue();
		assertThat(whole.path("metrics").isNull()).isTrue();
		JsonNode streamed = usageChunk(client.post(CHAT, chatBody("two", 3, true, ",\"n\":2" + USAGE)));
		assertThat(streamed.path("usage").path("completion_tokens").intValue()).isEqualTo(6);
		assertThat(streamed.has("metrics")).as("a null the usage chunk drops, as vLLM's exclude_none").isFalse();
		JsonNode prompts = client.post(COMPLETIONS, "{\"prompt\":[\"one\",\"two\"],\"max_tokens\":3}").json();
		assertThat(prompts.path("metrics").isNull()).isTrue();
		JsonNode tokenIds = client.post(COMPLETIONS, "{\"prompt\":[1,2,3],\"max_tokens\":3}").json();
		assertThat(tokenIds.path("metrics").isObject()).as("token ids are one prompt").isTrue();
	}

	@Test
	void includeMetricsFalseLeavesTheObjectOut() {
		String excluded = ",\"include_metrics\":false";
		assertThat(client.post(CHAT, chatBody("leave it out", 4, true, USAGE + excluded)).body())
			.doesNotContain("metrics");
		assertThat(client.post(CHAT, chatBody("leave it out", 4, false, excluded)).json().has("metrics")).isFalse();
		assertThat(client.post(RESPONSES, responsesBody(true, excluded)).body()).doesNotContain("metrics");
		assertThat(client.post(CHAT, chatBody("keep it", 4, false, ",\"include_metrics\":true"))
			.json()
			.path("metrics")
			.isObject()).isTrue();
		assertThat(client.post(CHAT, chatBody("keep it", 4, false, ",\"include_metrics\":\"no\""))
			.json()
			.path("metrics")
			.isObject()).as("only false leaves it out").isTrue();
	}

	@Test
	void wholeBodiesWriteTheObjectLastWithItsNulls() {
		JsonNode chat = client.post(CHAT, chatBody("whole", 5, false, "")).json();
		assertThat(List.copyOf(chat.propertyNames())).last().isEqualTo("metrics");
		assertThat(chat.path("metrics").propertyNames()).containsExactlyElementsOf(FIELDS);
		JsonNode one = client.post(COMPLETIONS, "{\"prompt\":\"one\",\"max_tokens\":1}").json();
		assertThat(List.copyOf(one.propertyNames())).last().isEqualTo("metrics");
		assertThat(one.path("metrics").propertyNames()).containsExactlyElementsOf(FIELDS);
		assertThat(one.path("metrics").path("mean_itl_ms").isNull()).as("one token has no ITL").isTrue();
		JsonNode streamedOne = usageChunk(client.post(CHAT, chatBody("one", 1, true, USAGE)));
		assertThat(streamedOne.path("metrics").propertyNames()).as("the usage chunk drops the null")
			.containsExactly("time_to_first_token_ms", "generation_time_ms", "queue_time_ms", "tokens_per_second");
		assertThat(streamedOne.path("metrics").path("generation_time_ms").doubleValue()).isZero();
	}

	@Test
	void responsesCarryTheObjectInTheCompletedResponseAndAtTheTopOfAWholeOne() {
		List<StreamingClient.Event> events = client.post(RESPONSES, responsesBody(true, "")).events();
		JsonNode created = events.get(0).json().path("response");
		assertThat(created.has("metrics")).isTrue();
		assertThat(created.path("metrics").isNull()).as("not yet known").isTrue();
		StreamingClient.Event completed = events.get(events.size() - 1);
		assertThat(completed.type()).isEqualTo("response.completed");
		JsonNode response = completed.json().path("response");
		assertThat(List.copyOf(response.propertyNames())).last().isEqualTo("metrics");
		assertThat(response.path("metrics").propertyNames()).containsExactlyElementsOf(FIELDS);
		JsonNode whole = client.post(RESPONSES, responsesBody(false, "")).json();
		assertThat(List.copyOf(whole.propertyNames())).last().isEqualTo("metrics");
		assertThat(whole.path("metrics").path("generation_time_ms").isNumber()).isTrue();
	}

	@Test
	void theValuesAreTheEnginesTimesOfTheTrace() {
		JsonNode metrics = usageChunk(
				client.post(CHAT, chatBody("timed", 20, true, USAGE), Map.of("X-Request-Id", "timed")))
			.path("metrics");
		List<TraceEntry> trace = server.engine().trace("timed");
		assertThat(trace).hasSize(20);
		double generation = (trace.get(19).stepEndNanos() - trace.get(0).stepEndNanos()) / MS;
		assertThat(metrics.path("generation_time_ms").doubleValue()).isCloseTo(generation, within(1.0));
		double ttft = metrics.path("time_to_first_token_ms").doubleValue();
		double queue = metrics.path("queue_time_ms").doubleValue();
		assertThat(ttft).isPositive();
		assertThat(queue).isNotNegative();
		assertThat(ttft + queue).as("arrival to first token")
			.isCloseTo(trace.get(0).sincePreviousTokenNanos() / MS, within(0.01));
		assertThat(metrics.path("mean_itl_ms").doubleValue()).isCloseTo(generation / 19, within(0.1));
		assertThat(metrics.path("tokens_per_second").doubleValue()).isCloseTo(20 / (ttft + generation) * 1000,
				within(0.01));
	}

	@Test
	void aTokenHeldInTheHttpLayerIsLateForTheClientButNotInTheGenerationTime() {
		StreamingClient.Exchange exchange = client.post(CHAT, chatBody("hold one", 20, true, USAGE),
				Map.of(FaultHeaders.HTTP_STALL, "5:500", "X-Request-Id", "held-metrics"));
		List<StreamingClient.Event> tokens = exchange.contentEvents();
		assertThat(tokens).hasSize(20);
		long held = tokens.get(5).nanos() - tokens.get(4).nanos();
		assertThat(held).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(490));
		List<TraceEntry> trace = server.engine().trace("held-metrics");
		double engineGeneration = (trace.get(19).stepEndNanos() - trace.get(0).stepEndNanos()) / MS;
		double generation = usageChunk(exchange).path("metrics").path("generation_time_ms").doubleValue();
		assertThat(generation).isCloseTo(engineGeneration, within(1.0));
		assertThat(generation).isLessThan(400);
		double clientToHeld = (tokens.get(5).nanos() - tokens.get(0).nanos()) / MS;
		double engineToHeld = (trace.get(5).stepEndNanos() - trace.get(0).stepEndNanos()) / MS;
		assertThat(clientToHeld - engineToHeld).as("the held token reached the client 500 ms after the engine")
			.isGreaterThanOrEqualTo(490);
	}

	private static JsonNode usageChunk(StreamingClient.Exchange exchange) {
		List<StreamingClient.Event> events = exchange.events();
		assertThat(events.get(events.size() - 1).done()).isTrue();
		return events.get(events.size() - 2).json();
	}

	private static String responsesBody(boolean stream, String extra) {
		return "{\"model\":\"sim-llama-3-8b\",\"input\":\"measure me\",\"max_output_tokens\":4,\"stream\":" + stream
				+ extra + "}";
	}

}
