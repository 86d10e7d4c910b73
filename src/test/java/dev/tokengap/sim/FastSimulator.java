package dev.tokengap.sim;

import java.time.Duration;

import dev.tokengap.testsupport.StreamingClient;

/**
 * Simulator settings for tests: steps of a few milliseconds so a stream of dozens of
 * tokens takes a fraction of a second.
 */
final class FastSimulator {

	static final String CHAT = "/v1/chat/completions";

	static final String COMPLETIONS = "/v1/completions";

	static final String RESPONSES = "/v1/responses";

	static final String MESSAGES = "/v1/messages";

	private FastSimulator() {
	}

	static SimulatorProperties.Builder properties() {
		return SimulatorProperties.defaults()
			.toBuilder()
			.stepFixedCost(Duration.ofMillis(3))
			.stepCostPerSeq(Duration.ofNanos(100_000))
			.stepCostPerPrefillToken(Duration.ofNanos(5_000));
	}

	static SimulatorServer start(SimulatorProperties properties) {
		return SimulatorServer.start(properties, "127.0.0.1", 0);
	}

	static SimulatorServer start() {
		return start(properties().build());
	}

	/** A client of the server, whose responses are split into SSE events. */
	static StreamingClient client(SimulatorServer server) {
		return StreamingClient.at(server.baseUrl());
	}

	/** A chat completion's body for the simulator's model. */
	static String chatBody(String content, int maxTokens, boolean stream, String extra) {
		return "{\"model\":\"sim-llama-3-8b\",\"messages\":[{\"role\":\"user\",\"content\":" + OpenAiJson.quote(content)
				+ "}],\"max_tokens\":" + maxTokens + ",\"stream\":" + stream + extra + "}";
	}

	static String chatBody(String content, int maxTokens) {
		return chatBody(content, maxTokens, true, "");
	}

}
