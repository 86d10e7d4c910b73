package dev.tokengap.proxy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import com.anthropic.client.AnthropicClient;
import com.anthropic.client.okhttp.AnthropicOkHttpClient;
import com.anthropic.helpers.MessageAccumulator;
import com.anthropic.models.messages.Message;
import com.anthropic.models.messages.MessageCreateParams;
import com.anthropic.models.messages.RawMessageStreamEvent;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.http.StreamResponse;
import com.openai.models.responses.Response;
import com.openai.models.responses.ResponseCreateParams;
import com.openai.models.responses.ResponseStreamEvent;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;

import dev.tokengap.testsupport.PrometheusText;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The vendors' own Java clients against tokengap in demo mode (its in-process simulator
 * behind the proxy, over real HTTP): OpenAI's for a Responses stream, Anthropic's for a
 * Messages stream. Each event is validated by the SDK, so a field the SDK requires and
 * the simulator leaves out fails here.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = { "management.server.port=0",
		"tokengap.mode=demo", "tokengap.demo.load=false", "tokengap.sim.step-fixed-cost=5ms" })
class RealClientsIntegrationTests {

	private static final String MODEL = "sim-llama-3-8b";

	@LocalServerPort
	int port;

	@LocalManagementPort
	int managementPort;

	@Test
	void openAiJavaClientStreamsAWholeResponsesCallThroughTokengap() {
		OpenAIClient client = openAi();
		ResponseCreateParams params = ResponseCreateParams.builder()
			.model(MODEL)
			.input("Write a short poem about latency.")
			.maxOutputTokens(12)
			.build();
		StreamCounts before = counts("responses");
		StringBuilder text = new StringBuilder();
		List<Response> completed = new ArrayList<>();
		try (StreamResponse<ResponseStreamEvent> stream = client.responses().createStreaming(params)) {
			stream.stream().forEach((event) -> {
				event.validate();
				event.outputTextDelta().ifPresent((delta) -> text.append(delta.delta()));
				event.completed().ifPresent((done) -> completed.add(done.response()));
			});
		}
		assertThat(text.toString().split(" ")).hasSize(12);
		assertThat(completed).hasSize(1);
		assertThat(completed.get(0).usage().orElseThrow().outputTokens()).isEqualTo(12);
		Response whole = client.responses().create(params).validate();
		String wholeText = whole.output().get(0).asMessage().content().get(0).asOutputText().text();
		assertThat(text).hasToString(wholeText);
		assertOneCompletedStream("responses", before, 12);
	}

	@Test
	void anthropicJavaClientStreamsAWholeMessagesCallThroughTokengap() {
		AnthropicClient client = anthropic();
		MessageCreateParams params = MessageCreateParams.builder()
			.model(MODEL)
			.maxTokens(12)
			.addUserMessage("Write a short poem about latency.")
			.build();
		StreamCounts before = counts("messages");
		StringBuilder text = new StringBuilder();
		MessageAccumulator accumulator = MessageAccumulator.create();
		try (com.anthropic.core.http.StreamResponse<RawMessageStreamEvent> stream = client.messages()
			.createStreaming(params)) {
			stream.stream().forEach((event) -> {
				event.validate();
				accumulator.accumulate(event);
				event.contentBlockDelta()
					.flatMap((delta) -> delta.delta().text())
					.ifPresent((delta) -> text.append(delta.text()));
			});
		}
		assertThat(text.toString().split(" ")).hasSize(12);
		Message streamed = accumulator.message();
		assertThat(streamed.usage().outputTokens()).isEqualTo(12);
		assertThat(streamed.stopReason().orElseThrow().asString()).isEqualTo("max_tokens");
		Message whole = client.messages().create(params);
		assertThat(text).hasToString(whole.content().get(0).asText().text());
		assertOneCompletedStream("messages", before, 12);
	}

	@Test
	void openAiJavaClientReadsVllmsReasoningItemThroughTokengap() {
		OpenAIClient client = openAi();
		ResponseCreateParams params = ResponseCreateParams.builder()
			.model(MODEL)
			.input("Think, then answer.")
			.maxOutputTokens(8)
			.putAdditionalHeader("X-Sim-Reasoning-Tokens", "3")
			.build();
		StringBuilder reasoning = new StringBuilder();
		StringBuilder text = new StringBuilder();
		List<String> unknownToTheSdk = new ArrayList<>();
		try (StreamResponse<ResponseStreamEvent> stream = client.responses().createStreaming(params)) {
			stream.stream().forEach((event) -> {
				// vLLM's response.reasoning_part.* events are its own, not OpenAI's.
				if (!event.isValid()) {
					unknownToTheSdk.add(String.valueOf(event._json().orElseThrow()));
				}
				event.reasoningTextDelta().ifPresent((delta) -> reasoning.append(delta.delta()));
				event.outputTextDelta().ifPresent((delta) -> text.append(delta.delta()));
			});
		}
		assertThat(reasoning.toString().split(" ")).hasSize(3);
		assertThat(text.toString().split(" ")).hasSize(5);
		assertThat(unknownToTheSdk).hasSize(2).allSatisfy((type) -> assertThat(type).contains("reasoning_part"));
	}

	@Test
	void anthropicJavaClientAccumulatesAThinkingBlockThroughTokengap() {
		AnthropicClient client = anthropic();
		MessageCreateParams params = MessageCreateParams.builder()
			.model(MODEL)
			.maxTokens(8)
			.addUserMessage("Think, then answer.")
			.putAdditionalHeader("X-Sim-Reasoning-Tokens", "3")
			.build();
		MessageAccumulator accumulator = MessageAccumulator.create();
		try (com.anthropic.core.http.StreamResponse<RawMessageStreamEvent> stream = client.messages()
			.createStreaming(params)) {
			stream.stream().forEach((event) -> accumulator.accumulate(event.validate()));
		}
		Message message = accumulator.message();
		assertThat(message.content()).hasSize(2);
		assertThat(message.content().get(0).asThinking().thinking().split(" ")).hasSize(3);
		assertThat(message.content().get(1).asText().text().split(" ")).hasSize(5);
	}

	/** OpenAI's client pointed at tokengap's proxy port (the simulator needs no key). */
	private OpenAIClient openAi() {
		return OpenAIOkHttpClient.builder()
			.baseUrl("http://127.0.0.1:" + this.port + "/v1")
			.apiKey("not-needed")
			.build();
	}

	/** Anthropic's client pointed at tokengap's proxy port. */
	private AnthropicClient anthropic() {
		return AnthropicOkHttpClient.builder().baseUrl("http://127.0.0.1:" + this.port).apiKey("not-needed").build();
	}

	/**
	 * The stream the client just read is in tokengap's exposition: one TTFT, one ITL
	 * sample per token after the first (the simulator sends one token per event), one
	 * completed stream, and nothing else counted for the endpoint (the non-streamed call
	 * is a request, not a stream).
	 */
	private void assertOneCompletedStream(String endpoint, StreamCounts before, int tokens) {
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(counts(endpoint).completed()).isEqualTo(before.completed() + 1));
		StreamCounts after = counts(endpoint);
		assertThat(after.streams()).isEqualTo(before.streams() + 1);
		assertThat(after.ttft()).isEqualTo(before.ttft() + 1);
		assertThat(after.itl()).isEqualTo(before.itl() + tokens - 1);
		assertThat(after.requests()).isEqualTo(before.requests() + 2);
	}

	private StreamCounts counts(String endpoint) {
		PrometheusText metrics = PrometheusText.scrape(this.managementPort);
		String[] e = { "model_name", MODEL, "endpoint", endpoint };
		return new StreamCounts(metrics.value("tokengap_streams_total", e),
				metrics.value("tokengap_streams_total", "model_name", MODEL, "endpoint", endpoint, "outcome",
						"completed"),
				metrics.value("tokengap_time_to_first_token_seconds_count", e),
				metrics.value("tokengap_inter_token_latency_seconds_count", e),
				metrics.value("tokengap_requests_total", e));
	}

	private record StreamCounts(double streams, double completed, double ttft, double itl, double requests) {
	}

}
