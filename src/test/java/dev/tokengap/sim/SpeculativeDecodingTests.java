package dev.tokengap.sim;

import java.util.List;

import org.junit.jupiter.api.Test;

import dev.tokengap.testsupport.StreamingClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Speculative decoding as vLLM streams it: a decode step yields its accepted drafts and
 * one more token in one event, and the {@code vllm:spec_decode_*} counters say how many
 * were drafted and accepted; without drafts those counters do not exist.
 */
class SpeculativeDecodingTests {

	private static final String CHAT = "/v1/chat/completions";

	private static final String USAGE = ",\"stream_options\":{\"include_usage\":true}";

	@Test
	void everyAcceptedDraftRidesInTheEventOfItsStep() {
		SimulatorProperties properties = FastSimulator.properties()
			.numSpeculativeTokens(3)
			.specAcceptanceRate(1.0)
			.build();
		try (SimulatorServer server = FastSimulator.start(properties)) {
			StreamingClient client = FastSimulator.client(server);
			StreamingClient.Exchange exchange = client.post(CHAT, FastSimulator.chatBody("draft me", 9, true, USAGE));
			List<String> contents = exchange.events()
				.stream()
				.filter((event) -> !event.data().equals("[DONE]"))
				.map(StreamingClient.Event::content)
				.filter((text) -> !text.isEmpty())
				.toList();
			// The first token comes from the prefill; then 4 tokens a step:
			// 1 + 4 + 4 = 9.
			assertThat(contents).hasSize(3);
			assertThat(contents.get(1).trim().split(" ")).hasSize(4);
			assertThat(exchange.body()).contains("\"completion_tokens\":9");
			String metrics = client.get("/metrics").body();
			assertThat(metrics)
				.contains("vllm:spec_decode_num_drafts_total{engine=\"0\",model_name=\"sim-llama-3-8b\"} 2.0")
				.contains("vllm:spec_decode_num_draft_tokens_total{engine=\"0\",model_name=\"sim-llama-3-8b\"} 6.0")
				.contains("vllm:spec_decode_num_accepted_tokens_total{engine=\"0\",model_name=\"sim-llama-3-8b\"} 6.0")
				.contains("vllm:spec_decode_num_accepted_tokens_per_pos_total{engine=\"0\","
						+ "model_name=\"sim-llama-3-8b\",position=\"2\"} 2.0");
		}
	}

	@Test
	void rejectedDraftsCostAStepOfOneToken() {
		SimulatorProperties properties = FastSimulator.properties()
			.numSpeculativeTokens(2)
			.specAcceptanceRate(0.0)
			.build();
		try (SimulatorServer server = FastSimulator.start(properties)) {
			StreamingClient client = FastSimulator.client(server);
			StreamingClient.Exchange exchange = client.post(CHAT, FastSimulator.chatBody("draft me", 5, true, USAGE));
			assertThat(exchange.events()
				.stream()
				.filter((event) -> !event.data().equals("[DONE]"))
				.map(StreamingClient.Event::content)
				.filter((text) -> !text.isEmpty())).hasSize(5);
			String metrics = client.get("/metrics").body();
			assertThat(metrics)
				.contains("vllm:spec_decode_num_draft_tokens_total{engine=\"0\",model_name=\"sim-llama-3-8b\"} 8.0")
				.contains("vllm:spec_decode_num_accepted_tokens_total{engine=\"0\",model_name=\"sim-llama-3-8b\"} 0.0");
		}
	}

	@Test
	void anEngineWithoutDraftsHasNoSpecDecodeSeries() {
		try (SimulatorServer server = FastSimulator.start()) {
			assertThat(FastSimulator.client(server).get("/metrics").body()).doesNotContain("spec_decode");
		}
	}

}
