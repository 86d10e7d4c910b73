package dev.tokengap.sim;

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

/**
 * Reasoning, tool calls and several choices, on the endpoints that have them.
 */
class StreamShapesTests extends SharedSimulatorTests {

	private static final Map<String, String> TWO_REASONING = Map.of(FaultHeaders.REASONING_TOKENS, "2");

	@Test
	void chatStreamsTheLeadingTokensAsDeltaReasoning() {
		List<StreamingClient.Event> events = client.post(CHAT, chatBody("think first", 5), TWO_REASONING).events();
		assertThat(events).hasSize(1 + 5 + 1);
		for (int i = 1; i <= 5; i++) {
			JsonNode delta = events.get(i).json().path("choices").path(0).path("delta");
			assertThat(delta.propertyNames()).containsExactly((i <= 2) ? "reasoning" : "content");
			assertThat(events.get(i).data()).contains("\"delta\":{\"" + ((i <= 2) ? "reasoning" : "content") + "\":\"");
		}
	}

	@Test
	void reasoningShareMakesThatFractionOfMaxTokensReasoning() {
		try (SimulatorServer own = FastSimulator.start(FastSimulator.properties().reasoningShare(0.5).build())) {
			List<StreamingClient.Event> events = FastSimulator.client(own).post(CHAT, chatBody("half", 6)).events();
			assertThat(events.subList(1, 7))
				.extracting(
						(event) -> event.json().path("choices").path(0).path("delta").propertyNames().iterator().next())
				.containsExactly("reasoning", "reasoning", "reasoning", "content", "content", "content");
		}
	}

	@Test
	void nonStreamingChatCarriesTheReasoningApart() {
		JsonNode message = client.post(CHAT, chatBody("think", 5, false, ""), TWO_REASONING)
			.json()
			.path("choices")
			.path(0)
			.path("message");
		assertThat(message.path("reasoning").stringValue().split(" ")).hasSize(2);
		assertThat(message.path("content").stringValue().split(" ")).hasSize(3);
	}

	@Test
	void responsesStreamAReasoningItemBeforeTheMessage() {
		List<StreamingClient.Event> events = client.post(RESPONSES, responsesBody("\"think\"", 4, true), TWO_REASONING)
			.events();
		assertThat(events).extracting(StreamingClient.Event::type)
			.containsExactly("response.created", "response.in_progress", "response.output_item.added",
					"response.reasoning_part.added", "response.reasoning_text.delta", "response.reasoning_text.delta",
					"response.reasoning_text.done", "response.reasoning_part.done", "response.output_item.done",
					"response.output_item.added", "response.content_part.added", "response.output_text.delta",
					"response.output_text.delta", "response.output_text.done", "response.content_part.done",
					"response.output_item.done", "response.completed");
		assertThat(events.get(2).json().path("item").path("type").stringValue()).isEqualTo("reasoning");
		assertThat(events.get(2).json().path("item").path("id").stringValue()).startsWith("rs_");
		assertThat(events.get(4).data()).startsWith("{\"content_index\":0,\"delta\":")
			.contains(",\"output_index\":0,\"sequence_number\":4,\"type\":\"response.reasoning_text.delta\"}");
		assertThat(events.get(9).json().path("output_index").intValue()).isEqualTo(1);
		assertThat(events.get(11).json().path("output_index").intValue()).isEqualTo(1);
		JsonNode response = events.get(16).json().path("response");
		assertThat(response.path("output")).extracting((item) -> item.path("type").stringValue())
			.containsExactly("reasoning", "message");
		assertThat(response.path("usage").path("output_tokens").intValue()).isEqualTo(4);
		assertThat(response.path("usage").path("output_tokens_details").path("reasoning_tokens").intValue())
			.isEqualTo(2);
	}

	@Test
	void messagesStreamAThinkingBlockBeforeTheTextBlock() {
		List<StreamingClient.Event> events = client.post(MESSAGES, messagesBody("think", 4, true), TWO_REASONING)
			.events();
		assertThat(events).extracting(StreamingClient.Event::type)
			.containsExactly("message_start", "content_block_start", "content_block_delta", "content_block_delta",
					"content_block_stop", "content_block_start", "content_block_delta", "content_block_delta",
					"content_block_stop", "message_delta", "message_stop");
		assertThat(events.get(1).data()).isEqualTo("{\"type\":\"content_block_start\",\"index\":0,"
				+ "\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}}");
		assertThat(events.get(2).data()).startsWith(
				"{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":");
		assertThat(events.get(5).json().path("index").intValue()).isEqualTo(1);
		assertThat(events.get(6).json().path("delta").path("type").stringValue()).isEqualTo("text_delta");
		assertThat(events.get(8).data()).isEqualTo("{\"type\":\"content_block_stop\",\"index\":1}");
	}

	@Test
	void nonStreamingResponsesAndMessagesCarryTheReasoningAsItsOwnItemAndBlock() {
		JsonNode output = client.post(RESPONSES, responsesBody("\"think\"", 5, false), TWO_REASONING)
			.json()
			.path("output");
		assertThat(output).extracting((item) -> item.path("type").stringValue())
			.containsExactly("reasoning", "message");
		assertThat(output.path(0).path("content").path(0).path("text").stringValue().split(" ")).hasSize(2);
		JsonNode content = client.post(MESSAGES, messagesBody("think", 5, false), TWO_REASONING).json().path("content");
		assertThat(content).extracting((block) -> block.path("type").stringValue()).containsExactly("thinking", "text");
		assertThat(content.path(1).path("text").stringValue().split(" ")).hasSize(3);
	}

	@Test
	void requiredToolChoiceStreamsToolCallDeltasAsVllm() {
		String tools = ",\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"parameters\":{}}}],"
				+ "\"tool_choice\":\"required\"";
		List<StreamingClient.Event> events = client.post(CHAT, chatBody("weather?", 4, true, tools)).events();
		assertThat(events).hasSize(1 + 1 + 4 + 1);
		String first = events.get(1).data();
		assertThat(first).matches(".*\"delta\":\\{\"tool_calls\":\\[\\{\"id\":\"chatcmpl-tool-[0-9a-f]{32}\","
				+ "\"type\":\"function\",\"index\":0,\"function\":\\{\"name\":\"get_weather\",\"arguments\":\"\"}}]},"
				+ "\"logprobs\":null,\"finish_reason\":null}].*");
		StringBuilder arguments = new StringBuilder();
		for (int i = 2; i <= 5; i++) {
			JsonNode choice = events.get(i).json().path("choices").path(0);
			JsonNode call = choice.path("delta").path("tool_calls").path(0);
			assertThat(call.propertyNames()).containsExactly("index", "function");
			assertThat(call.path("function").propertyNames()).containsExactly("arguments");
			arguments.append(call.path("function").path("arguments").stringValue());
			assertThat(choice.path("finish_reason").isNull()).isEqualTo(i < 5);
		}
		assertThat(events.get(5).json().path("choices").path(0).path("finish_reason").stringValue())
			.isEqualTo("tool_calls");
		assertThat(StreamingClient.JSON.readTree(arguments.toString()).path("input").stringValue().split(" "))
			.hasSize(4);
		assertThat(events.get(6).done()).isTrue();
	}

	@Test
	void namedToolChoiceCallsThatFunctionAndAutoAnswersWithText() {
		String tools = ",\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"a\"}},"
				+ "{\"type\":\"function\",\"function\":{\"name\":\"b\"}}]";
		String named = tools + ",\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"b\"}}";
		JsonNode call = client.post(CHAT, chatBody("b", 2, true, named))
			.events()
			.get(1)
			.json()
			.path("choices")
			.path(0)
			.path("delta")
			.path("tool_calls")
			.path(0);
		assertThat(call.path("function").path("name").stringValue()).isEqualTo("b");
		List<StreamingClient.Event> auto = client
			.post(CHAT, chatBody("b", 2, true, tools + ",\"tool_choice\":\"auto\""))
			.events();
		assertThat(auto.get(1).content()).isNotEmpty();
		assertThat(client.post(CHAT, chatBody("b", 2, true, ",\"tool_choice\":\"required\"")).status()).isEqualTo(400);
	}

	@Test
	void nonStreamingToolCallIsAMessageWithToolCalls() {
		String tools = ",\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\"}}],\"tool_choice\":\"required\"";
		JsonNode choice = client.post(CHAT, chatBody("f", 3, false, tools)).json().path("choices").path(0);
		assertThat(choice.path("finish_reason").stringValue()).isEqualTo("tool_calls");
		JsonNode call = choice.path("message").path("tool_calls").path(0);
		assertThat(call.path("id").stringValue()).startsWith("chatcmpl-tool-");
		assertThat(call.path("function").path("name").stringValue()).isEqualTo("f");
		assertThat(StreamingClient.JSON.readTree(call.path("function").path("arguments").stringValue()).has("input"))
			.isTrue();
	}

	@Test
	void twoChatChoicesInterleaveInEngineStepOrderAfterAPreludePerChoice() {
		String options = ",\"n\":2,\"stream_options\":{\"include_usage\":true,\"continuous_usage_stats\":true}";
		List<StreamingClient.Event> events = client
			.post(CHAT, chatBody("two of them", 20, true, options), Map.of("X-Request-Id", "two-chat"))
			.events();
		assertThat(events).hasSize(2 + 2 * 20 + 1 + 1);
		assertThat(events.subList(0, 2)).extracting(StreamShapesTests::choiceIndex).containsExactly(0, 1);
		assertThat(events.subList(0, 2)).extracting((event) -> event.json().path("choices").path(0).path("delta"))
			.allSatisfy((delta) -> assertThat(delta.path("role").stringValue()).isEqualTo("assistant"));
		List<StreamingClient.Event> chunks = events.subList(2, 42);
		assertInEngineStepOrder(chunks, "two-chat");
		assertThat(chunks.stream().map(StreamShapesTests::choiceIndex).toList().indexOf(1)).as("interleaved")
			.isLessThan(chunks.stream().map(StreamShapesTests::choiceIndex).toList().lastIndexOf(0));
		int[] seen = new int[2];
		for (StreamingClient.Event chunk : chunks) {
			int choice = choiceIndex(chunk);
			assertThat(chunk.json().path("usage").path("completion_tokens").intValue()).as("that choice's count")
				.isEqualTo(++seen[choice]);
		}
		assertThat(events.get(42).json().path("usage").path("completion_tokens").intValue()).isEqualTo(40);
		assertThat(events.get(43).done()).isTrue();
		assertThat(server.engine().trace("0_two-chat")).hasSize(20);
		assertThat(server.engine().trace("1_two-chat")).hasSize(20);
	}

	/** Each chunk's token was produced in a step no earlier than the previous chunk's. */
	private static void assertInEngineStepOrder(List<StreamingClient.Event> chunks, String requestId) {
		List<List<TraceEntry>> traces = List.of(server.engine().trace("0_" + requestId),
				server.engine().trace("1_" + requestId));
		int[] next = new int[2];
		long previousStep = 0;
		for (StreamingClient.Event chunk : chunks) {
			int choice = choiceIndex(chunk);
			long step = traces.get(choice).get(next[choice]++).stepId();
			assertThat(step).isGreaterThanOrEqualTo(previousStep);
			previousStep = step;
		}
	}

	private static int choiceIndex(StreamingClient.Event event) {
		return event.json().path("choices").path(0).path("index").intValue();
	}

	@Test
	void twoCompletionChoicesInterleaveWithTheirOwnIndexAndSumTheirUsage() {
		String body = "{\"prompt\":\"two\",\"max_tokens\":4,\"n\":2,\"stream\":true,"
				+ "\"stream_options\":{\"include_usage\":true}}";
		List<StreamingClient.Event> events = client.post(COMPLETIONS, body, Map.of("X-Request-Id", "two-cmpl"))
			.events();
		assertThat(events).hasSize(2 * 4 + 1 + 1);
		assertInEngineStepOrder(events.subList(0, 8), "two-cmpl");
		assertThat(events.subList(0, 8)).extracting(StreamShapesTests::choiceIndex).containsOnly(0, 1);
		assertThat(events.get(8).json().path("usage").path("completion_tokens").intValue()).isEqualTo(8);
	}

	@Test
	void nonStreamingChatWithTwoChoicesAnswersBoth() {
		JsonNode json = client.post(CHAT, chatBody("both", 3, false, ",\"n\":2")).json();
		assertThat(json.path("choices")).hasSize(2);
		assertThat(json.path("choices").path(1).path("index").intValue()).isEqualTo(1);
		assertThat(json.path("usage").path("completion_tokens").intValue()).isEqualTo(6);
	}

}
