package dev.tokengap.sim;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

import dev.tokengap.testsupport.StreamingClient;

import static dev.tokengap.sim.FastSimulator.MESSAGES;
import static org.assertj.core.api.Assertions.assertThat;

class MessagesHandlerTests extends SharedSimulatorTests {

	static String messagesBody(String content, int maxTokens, boolean stream) {
		return "{\"model\":\"sim-llama-3-8b\",\"max_tokens\":" + maxTokens
				+ ",\"messages\":[{\"role\":\"user\",\"content\":" + OpenAiJson.quote(content) + "}],\"stream\":"
				+ stream + "}";
	}

	@Test
	void messagesStreamIsStartBlockDeltasStopDeltaStopAndNoDone() {
		StreamingClient.Exchange exchange = client.post(MESSAGES, messagesBody("Tell me about gaps", 3, true));
		assertThat(exchange.status()).isEqualTo(200);
		assertThat(exchange.headers().get("Content-Type")).isEqualTo("text/event-stream; charset=utf-8");
		assertThat(exchange.body()).matches("(event: [a-z_]+\\ndata: \\{[^\\n]+\\}\\n\\n)+").doesNotContain("[DONE]");
		List<StreamingClient.Event> events = exchange.events();
		assertThat(events).extracting(StreamingClient.Event::type)
			.containsExactly("message_start", "content_block_start", "content_block_delta", "content_block_delta",
					"content_block_delta", "content_block_stop", "message_delta", "message_stop");
		events.forEach((event) -> assertThat(event.data()).startsWith("{\"type\":\"" + event.type() + "\""));
		assertThat(exchange.body()).endsWith("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
	}

	@Test
	void messageStartAndDeltasHaveAnthropicsShape() {
		List<StreamingClient.Event> events = client.post(MESSAGES, messagesBody("12345678", 2, true)).events();
		JsonNode message = events.get(0).json().path("message");
		assertThat(message.path("id").stringValue()).startsWith("msg_");
		assertThat(events.get(0).data()).endsWith(",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],"
				+ "\"model\":\"sim-llama-3-8b\",\"stop_reason\":null,\"stop_sequence\":null,"
				+ "\"usage\":{\"input_tokens\":2,\"output_tokens\":0}}}");
		assertThat(events.get(1).data()).isEqualTo(
				"{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}");
		assertThat(events.get(2).data())
			.startsWith("{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"");
		assertThat(events.get(4).data()).isEqualTo("{\"type\":\"content_block_stop\",\"index\":0}");
		assertThat(events.get(5).data()).isEqualTo("{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":"
				+ "\"max_tokens\",\"stop_sequence\":null},\"usage\":{\"input_tokens\":2,\"output_tokens\":2}}");
	}

	@Test
	void nonStreamingMessageHasTheWholeTextAsOneBlock() {
		String body = "{\"model\":\"sim-llama-3-8b\",\"max_tokens\":5,\"system\":\"be brief\","
				+ "\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"same\"}]}]}";
		StreamingClient.Exchange exchange = client.post(MESSAGES, body);
		assertThat(exchange.status()).isEqualTo(200);
		JsonNode json = exchange.json();
		assertThat(json.path("type").stringValue()).isEqualTo("message");
		assertThat(json.path("content").path(0).path("type").stringValue()).isEqualTo("text");
		assertThat(json.path("content").path(0).path("text").stringValue().split(" ")).hasSize(5);
		assertThat(json.path("stop_reason").stringValue()).isEqualTo("max_tokens");
		assertThat(json.path("usage").path("output_tokens").intValue()).isEqualTo(5);
		StringBuilder streamed = new StringBuilder();
		client.post(MESSAGES, body.replace("{\"model\"", "{\"stream\":true,\"model\""))
			.events()
			.stream()
			.filter((event) -> "content_block_delta".equals(event.type()))
			.forEach((event) -> streamed.append(event.json().path("delta").path("text").stringValue()));
		assertThat(streamed.toString()).isEqualTo(json.path("content").path(0).path("text").stringValue());
	}

	@Test
	void missingMaxTokensIsAnAnthropicInvalidRequestError() {
		StreamingClient.Exchange exchange = client.post(MESSAGES,
				"{\"model\":\"sim-llama-3-8b\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}");
		assertThat(exchange.status()).isEqualTo(400);
		assertThat(exchange.json().path("type").stringValue()).isEqualTo("error");
		assertThat(exchange.json().path("error").path("type").stringValue()).isEqualTo("invalid_request_error");
	}

	@Test
	void unknownModelIsNotFound() {
		StreamingClient.Exchange exchange = client.post(MESSAGES,
				messagesBody("x", 2, true).replace("sim-llama-3-8b", "claude"), Map.of());
		assertThat(exchange.status()).isEqualTo(404);
		assertThat(exchange.json().path("error").path("type").stringValue()).isEqualTo("not_found_error");
	}

}
