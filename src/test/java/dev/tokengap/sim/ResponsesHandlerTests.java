package dev.tokengap.sim;

import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

import dev.tokengap.testsupport.StreamingClient;

import static dev.tokengap.sim.FastSimulator.RESPONSES;
import static org.assertj.core.api.Assertions.assertThat;

class ResponsesHandlerTests extends SharedSimulatorTests {

	static String responsesBody(String input, int maxOutputTokens, boolean stream) {
		return "{\"model\":\"sim-llama-3-8b\",\"input\":" + input + ",\"max_output_tokens\":" + maxOutputTokens
				+ ",\"stream\":" + stream + "}";
	}

	@Test
	void responsesStreamEndsWithResponseCompletedAndNoDone() {
		StreamingClient.Exchange exchange = client.post(RESPONSES, responsesBody("\"Tell me about gaps\"", 4, true));
		assertThat(exchange.status()).isEqualTo(200);
		assertThat(exchange.headers().get("Content-Type")).isEqualTo("text/event-stream; charset=utf-8");
		assertThat(exchange.body()).matches("(event: [a-z_.]+\\ndata: \\{[^\\n]+\\}\\n\\n)+").doesNotContain("[DONE]");
		assertThat(exchange.events()).extracting(StreamingClient.Event::type)
			.containsExactly("response.created", "response.in_progress", "response.output_item.added",
					"response.content_part.added", "response.output_text.delta", "response.output_text.delta",
					"response.output_text.delta", "response.output_text.delta", "response.output_text.done",
					"response.content_part.done", "response.output_item.done", "response.completed");
		assertThat(exchange.body()).endsWith("\"type\":\"response.completed\"}\n\n");
	}

	@Test
	void everyEventRepeatsItsTypeAndCountsItsSequenceNumberUp() {
		List<StreamingClient.Event> events = client.post(RESPONSES, responsesBody("\"count\"", 5, true)).events();
		for (int i = 0; i < events.size(); i++) {
			JsonNode json = events.get(i).json();
			assertThat(json.path("type").stringValue()).isEqualTo(events.get(i).type());
			assertThat(json.path("sequence_number").intValue()).isEqualTo(i);
			assertThat(events.get(i).data()).endsWith(",\"type\":\"" + events.get(i).type() + "\"}");
		}
	}

	@Test
	void deltasCarryTheTextAndTheDoneEventsAndCompletedResponseRepeatIt() {
		List<StreamingClient.Event> events = client.post(RESPONSES, responsesBody("\"whole text\"", 6, true)).events();
		List<StreamingClient.Event> deltas = events.stream()
			.filter((event) -> "response.output_text.delta".equals(event.type()))
			.toList();
		StringBuilder text = new StringBuilder();
		deltas.forEach((delta) -> text.append(delta.json().path("delta").stringValue()));
		assertThat(text.toString().split(" ")).hasSize(6);
		String itemId = events.get(2).json().path("item").path("id").stringValue();
		assertThat(itemId).startsWith("msg_");
		assertThat(deltas.get(0).data()).startsWith("{\"content_index\":0,\"delta\":")
			.contains(",\"item_id\":\"" + itemId + "\",\"logprobs\":[],\"output_index\":0,\"sequence_number\":4,");
		assertThat(byType(events, "response.output_text.done").path("text").stringValue()).isEqualTo(text.toString());
		JsonNode done = byType(events, "response.output_item.done").path("item");
		assertThat(done.path("status").stringValue()).isEqualTo("completed");
		assertThat(done.path("content").path(0).path("text").stringValue()).isEqualTo(text.toString());
		JsonNode response = byType(events, "response.completed").path("response");
		assertThat(response.path("status").stringValue()).isEqualTo("completed");
		assertThat(response.path("output").path(0).path("content").path(0).path("text").stringValue())
			.isEqualTo(text.toString());
		assertThat(response.path("usage").path("input_tokens").intValue()).isEqualTo(10 / 4);
		assertThat(response.path("usage").path("output_tokens").intValue()).isEqualTo(6);
		assertThat(response.path("usage").path("total_tokens").intValue()).isEqualTo(2 + 6);
	}

	@Test
	void createdAndInProgressAreSentBeforeThePrefill() {
		StreamingClient.Exchange exchange = client.post(RESPONSES, responsesBody("\"slow prefill\"", 2, true),
				Map.of(FaultHeaders.ENGINE_STALL, "0:600"));
		List<StreamingClient.Event> events = exchange.events();
		long inProgress = events.get(1).nanos() - exchange.startNanos();
		long firstDelta = events.get(4).nanos() - exchange.startNanos();
		assertThat(events.get(1).type()).isEqualTo("response.in_progress");
		assertThat(firstDelta).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(600));
		assertThat(firstDelta - inProgress).as("in_progress came well before the prefill ended")
			.isGreaterThan(TimeUnit.MILLISECONDS.toNanos(300));
		JsonNode created = events.get(0).json().path("response");
		assertThat(created.path("status").stringValue()).isEqualTo("in_progress");
		assertThat(created.path("usage").isNull()).isTrue();
		assertThat(created.path("output").isEmpty()).isTrue();
	}

	@Test
	void theResponseIdComesFromTheBodyNotFromTheRequestIdHeader() {
		String body = "{\"input\":\"hi\",\"max_output_tokens\":2,\"stream\":true,\"request_id\":\"resp_mine\"}";
		List<StreamingClient.Event> events = client.post(RESPONSES, body, Map.of("X-Request-Id", "header-id")).events();
		assertThat(events.get(0).json().path("response").path("id").stringValue()).isEqualTo("resp_mine");
		String generated = client.post(RESPONSES, responsesBody("\"hi\"", 2, true))
			.events()
			.get(0)
			.json()
			.path("response")
			.path("id")
			.stringValue();
		assertThat(generated).startsWith("resp_").hasSize(5 + 32);
	}

	@Test
	void responseObjectHasEveryFieldTheOpenAiSdkRequires() {
		JsonNode response = client.post(RESPONSES, responsesBody("\"all fields\"", 3, false)).json();
		assertThat(response.propertyNames()).contains("id", "created_at", "error", "incomplete_details", "instructions",
				"metadata", "model", "object", "output", "parallel_tool_calls", "temperature", "tool_choice", "tools",
				"top_p", "status", "usage");
		assertThat(response.path("object").stringValue()).isEqualTo("response");
		assertThat(response.path("usage").propertyNames()).containsExactly("input_tokens", "input_tokens_details",
				"output_tokens", "output_tokens_details", "total_tokens");
	}

	@Test
	void nonStreamingResponseIsOneJsonWithTheWholeText() {
		StreamingClient.Exchange exchange = client.post(RESPONSES, responsesBody(
				"[{\"role\":\"user\",\"content\":[{\"type\":\"input_text\",\"text\":\"hello\"}]}]", 5, false));
		assertThat(exchange.status()).isEqualTo(200);
		assertThat(exchange.headers().get("Content-Type")).isEqualTo("application/json");
		JsonNode json = exchange.json();
		assertThat(json.path("id").stringValue()).startsWith("resp_");
		assertThat(json.path("status").stringValue()).isEqualTo("completed");
		JsonNode message = json.path("output").path(0);
		assertThat(message.path("type").stringValue()).isEqualTo("message");
		assertThat(message.path("role").stringValue()).isEqualTo("assistant");
		assertThat(message.path("content").path(0).path("type").stringValue()).isEqualTo("output_text");
		assertThat(message.path("content").path(0).path("text").stringValue().split(" ")).hasSize(5);
		assertThat(json.path("usage").path("output_tokens").intValue()).isEqualTo(5);
	}

	@Test
	void theSameRequestReadsTheSameStreamedOrNot() {
		String whole = client.post(RESPONSES, responsesBody("\"same\"", 7, false))
			.json()
			.path("output")
			.path(0)
			.path("content")
			.path(0)
			.path("text")
			.stringValue();
		List<StreamingClient.Event> events = client.post(RESPONSES, responsesBody("\"same\"", 7, true)).events();
		assertThat(byType(events, "response.output_text.done").path("text").stringValue()).isEqualTo(whole);
	}

	@Test
	void resetAfterCutsTheResponsesStreamBeforeResponseCompleted() {
		StreamingClient.Exchange exchange = client.post(RESPONSES, responsesBody("\"cut\"", 20, true),
				Map.of(FaultHeaders.RESET_AFTER, "1"));
		assertThat(exchange.error()).isNotNull();
		assertThat(exchange.events()).extracting(StreamingClient.Event::type)
			.endsWith("response.output_text.delta", "response.output_text.delta")
			.doesNotContain("response.completed", "response.failed");
	}

	@Test
	void missingInputIsBadRequest() {
		StreamingClient.Exchange exchange = client.post(RESPONSES, "{\"model\":\"sim-llama-3-8b\",\"stream\":true}");
		assertThat(exchange.status()).isEqualTo(400);
		assertThat(exchange.json().path("error").path("type").stringValue()).isEqualTo("BadRequestError");
	}

	static JsonNode byType(List<StreamingClient.Event> events, String type) {
		return events.stream().filter((event) -> type.equals(event.type())).findFirst().orElseThrow().json();
	}

}
