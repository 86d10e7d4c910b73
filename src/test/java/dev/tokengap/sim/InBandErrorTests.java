package dev.tokengap.sim;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

import dev.tokengap.testsupport.StreamingClient;

import static dev.tokengap.sim.FastSimulator.CHAT;
import static dev.tokengap.sim.FastSimulator.COMPLETIONS;
import static dev.tokengap.sim.FastSimulator.MESSAGES;
import static dev.tokengap.sim.FastSimulator.RESPONSES;
import static dev.tokengap.sim.FastSimulator.chatBody;
import static dev.tokengap.sim.MessagesHandlerTests.messagesBody;
import static dev.tokengap.sim.ResponsesHandlerTests.responsesBody;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code X-Sim-Error-After} and {@code X-Sim-Error-Before-First}: each endpoint's in-band
 * failure, byte for byte, and the engine sequence aborted.
 */
class InBandErrorTests extends SharedSimulatorTests {

	private static final String OPENAI_ERROR = "data: {\"error\": {\"message\": \"Simulated engine error "
			+ "(X-Sim-Error-After)\", \"type\": \"InternalServerError\", \"param\": null, \"code\": 500}}";

	private static Map<String, String> errorAfter(int token, String requestId) {
		return Map.of(FaultHeaders.ERROR_AFTER, String.valueOf(token), "X-Request-Id", requestId);
	}

	@Test
	void chatErrorAfterSendsVllmsJsonDumpsErrorThenDoneAndAbortsTheSequence() {
		StreamingClient.Exchange exchange = client.post(CHAT, chatBody("fail", 500), errorAfter(2, "chat-fails"));
		List<StreamingClient.Event> events = exchange.events();
		assertThat(exchange.status()).isEqualTo(200);
		assertThat(events).hasSize(1 + 3 + 2);
		assertThat(events.get(3).json().path("choices").path(0).path("finish_reason").isNull()).isTrue();
		assertThat(events.get(4).raw()).isEqualTo(OPENAI_ERROR);
		assertThat(events.get(5).raw()).isEqualTo("data: [DONE]");
		assertThat(exchange.body()).endsWith(OPENAI_ERROR + "\n\ndata: [DONE]\n\n");
		assertAborted("chat-fails", 500);
	}

	@Test
	void completionsErrorAfterSendsTheSameErrorThenDone() {
		String body = "{\"prompt\":\"fail\",\"max_tokens\":500,\"stream\":true}";
		List<StreamingClient.Event> events = client.post(COMPLETIONS, body, errorAfter(0, "cmpl-fails")).events();
		assertThat(events).extracting(StreamingClient.Event::raw).hasSize(3).endsWith(OPENAI_ERROR, "data: [DONE]");
		assertAborted("cmpl-fails", 500);
	}

	@Test
	void responsesErrorAfterEndsWithResponseFailedAndNoCompletedNorDone() {
		StreamingClient.Exchange exchange = client.post(RESPONSES, responsesBody("\"fail\"", 500, true),
				errorAfter(1, "resp-fails"));
		List<StreamingClient.Event> events = exchange.events();
		StreamingClient.Event last = events.get(events.size() - 1);
		assertThat(last.type()).isEqualTo("response.failed");
		assertThat(events).extracting(StreamingClient.Event::type)
			.filteredOn("response.output_text.delta"::equals)
			.hasSize(2);
		assertThat(events).extracting(StreamingClient.Event::type).doesNotContain("response.completed");
		assertThat(exchange.body()).doesNotContain("[DONE]");
		JsonNode failed = last.json();
		assertThat(failed.path("sequence_number").intValue()).isEqualTo(events.size() - 1);
		assertThat(failed.path("response").path("status").stringValue()).isEqualTo("failed");
		assertThat(failed.path("response").path("error").path("code").stringValue()).isEqualTo("server_error");
		assertThat(failed.path("response").path("error").path("message").stringValue()).contains("X-Sim-Error-After");
		assertAborted("resp-fails", 500);
	}

	@Test
	void messagesErrorAfterEndsWithAnErrorEventAndNoMessageStop() {
		StreamingClient.Exchange exchange = client.post(MESSAGES, messagesBody("fail", 500, true),
				errorAfter(1, "msg-fails"));
		List<StreamingClient.Event> events = exchange.events();
		assertThat(events).extracting(StreamingClient.Event::type)
			.containsExactly("message_start", "content_block_start", "content_block_delta", "content_block_delta",
					"error");
		assertThat(events.get(4).raw()).isEqualTo("event: error\ndata: {\"type\": \"error\", \"error\": "
				+ "{\"type\": \"api_error\", \"message\": \"Simulated engine error (X-Sim-Error-After)\"}}");
		assertAborted("msg-fails", 500);
	}

	@Test
	void errorAfterBeyondTheLastTokenLeavesTheStreamWhole() {
		List<StreamingClient.Event> events = client.post(CHAT, chatBody("fine", 3), errorAfter(10, "no-error"))
			.events();
		assertThat(events).hasSize(1 + 3 + 1);
		assertThat(events.get(4).done()).isTrue();
	}

	@Test
	void chatErrorBeforeTheFirstTokenIsDroppedLeavingThePreludeAndDone() {
		StreamingClient.Exchange exchange = client.post(CHAT, chatBody("dropped", 500),
				Map.of(FaultHeaders.ERROR_BEFORE_FIRST, "true", "X-Request-Id", "chat-dropped"));
		List<StreamingClient.Event> events = exchange.events();
		assertThat(events).hasSize(2);
		assertThat(events.get(0).json().path("choices").path(0).path("delta").toString())
			.isEqualTo("{\"role\":\"assistant\",\"content\":\"\"}");
		assertThat(events.get(1).raw()).isEqualTo("data: [DONE]");
		assertAborted("chat-dropped", 500);
	}

	@Test
	void completionsErrorBeforeTheFirstTokenIsJustDone() {
		String body = "{\"prompt\":\"dropped\",\"max_tokens\":500,\"stream\":true}";
		StreamingClient.Exchange exchange = client.post(COMPLETIONS, body,
				Map.of(FaultHeaders.ERROR_BEFORE_FIRST, "true", "X-Request-Id", "cmpl-dropped"));
		assertThat(exchange.status()).isEqualTo(200);
		assertThat(exchange.body()).isEqualTo("data: [DONE]\n\n");
		assertAborted("cmpl-dropped", 500);
	}

	@Test
	void responsesErrorBeforeTheFirstTokenJustEndsAfterInProgress() {
		StreamingClient.Exchange exchange = client.post(RESPONSES, responsesBody("\"dropped\"", 500, true),
				Map.of(FaultHeaders.ERROR_BEFORE_FIRST, "true"));
		assertThat(exchange.events()).extracting(StreamingClient.Event::type)
			.containsExactly("response.created", "response.in_progress");
	}

	@Test
	void messagesErrorBeforeTheFirstTokenIsAnErrorEventAlone() {
		StreamingClient.Exchange exchange = client.post(MESSAGES, messagesBody("dropped", 500, true),
				Map.of(FaultHeaders.ERROR_BEFORE_FIRST, "true", "X-Request-Id", "msg-dropped"));
		assertThat(exchange.events()).extracting(StreamingClient.Event::type).containsExactly("error");
		assertThat(exchange.events().get(0).json().path("error").path("type").stringValue()).isEqualTo("api_error");
		assertAborted("msg-dropped", 500);
	}

	@Test
	void badErrorHeaderIsBadRequest() {
		assertThat(client.post(CHAT, chatBody("x", 2), Map.of(FaultHeaders.ERROR_BEFORE_FIRST, "maybe")).status())
			.isEqualTo(400);
		assertThat(client.post(CHAT, chatBody("x", 2), Map.of(FaultHeaders.ERROR_AFTER, "-1")).status()).isEqualTo(400);
	}

	private static void assertAborted(String requestId, int maxTokens) {
		await().atMost(Duration.ofSeconds(2)).until(() -> server.engine().running() == 0);
		assertThat(server.engine().trace(requestId)).hasSizeLessThan(maxTokens / 10);
	}

}
