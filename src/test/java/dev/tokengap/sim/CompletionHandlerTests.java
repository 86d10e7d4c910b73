package dev.tokengap.sim;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

import dev.tokengap.testsupport.StreamingClient;

import static dev.tokengap.sim.FastSimulator.CHAT;
import static dev.tokengap.sim.FastSimulator.COMPLETIONS;
import static dev.tokengap.sim.FastSimulator.chatBody;
import static org.assertj.core.api.Assertions.assertThat;

class CompletionHandlerTests extends SharedSimulatorTests {

	private static final String INCLUDE_USAGE = ",\"stream_options\":{\"include_usage\":true}";

	@Test
	void streamedChatCompletionIsPreludeThenOneEventPerTokenThenUsageThenDone() {
		StreamingClient.Exchange exchange = client.post(CHAT,
				chatBody("Tell me about token gaps", 7, true, INCLUDE_USAGE));
		assertThat(exchange.status()).isEqualTo(200);
		assertThat(exchange.headers().get("Content-Type")).isEqualTo("text/event-stream; charset=utf-8");
		assertThat(exchange.body()).matches("(data: [^\\n]+\\n\\n)+");
		List<StreamingClient.Event> events = exchange.events();
		assertThat(events).hasSize(1 + 7 + 1 + 1);
		assertPrelude(events.get(0).json());
		for (int i = 1; i <= 7; i++) {
			JsonNode choice = events.get(i).json().path("choices").path(0);
			assertThat(choice.path("delta").path("content").stringValue()).isNotBlank().endsWith(" ");
			assertThat(choice.path("finish_reason").isNull()).isEqualTo(i < 7);
		}
		assertThat(events.get(7).json().path("choices").path(0).path("finish_reason").stringValue())
			.isEqualTo("length");
		JsonNode usage = events.get(8).json();
		assertThat(usage.path("choices").isEmpty()).isTrue();
		assertThat(usage.path("usage").path("completion_tokens").intValue()).isEqualTo(7);
		assertThat(usage.path("usage").path("prompt_tokens").intValue()).isEqualTo(24 / 4);
		assertThat(usage.path("usage").path("total_tokens").intValue()).isEqualTo(6 + 7);
		assertThat(events.get(9).raw()).isEqualTo("data: [DONE]");
		assertThat(events.subList(0, 9)).extracting((event) -> event.json().path("id").stringValue())
			.allSatisfy((id) -> assertThat(id).isEqualTo(events.get(0).json().path("id").stringValue()));
	}

	private static void assertPrelude(JsonNode prelude) {
		assertThat(prelude.path("id").stringValue()).startsWith("chatcmpl-");
		assertThat(prelude.path("object").stringValue()).isEqualTo("chat.completion.chunk");
		assertThat(prelude.path("model").stringValue()).isEqualTo("sim-llama-3-8b");
		assertThat(prelude.path("created").isIntegralNumber()).isTrue();
		JsonNode choice = prelude.path("choices").path(0);
		assertThat(choice.path("delta").toString()).isEqualTo("{\"role\":\"assistant\",\"content\":\"\"}");
		assertThat(choice.path("logprobs").isNull()).isTrue();
		assertThat(choice.path("finish_reason").isNull()).isTrue();
		assertThat(prelude.has("usage")).isFalse();
	}

	@Test
	void streamWithoutIncludeUsageEndsWithTheLastTokenAndDone() {
		List<StreamingClient.Event> events = client.post(CHAT, chatBody("hi", 3)).events();
		assertThat(events).hasSize(1 + 3 + 1);
		assertThat(events.get(3).json().path("choices").path(0).path("finish_reason").stringValue())
			.isEqualTo("length");
		assertThat(events).noneMatch((event) -> !event.done() && event.json().has("usage"));
		assertThat(events.get(4).done()).isTrue();
	}

	@Test
	void continuousUsageStatsPutsTheCumulativeUsageOnEveryEvent() {
		String options = ",\"stream_options\":{\"include_usage\":true,\"continuous_usage_stats\":true}";
		List<StreamingClient.Event> events = client.post(CHAT, chatBody("12345678", 4, true, options)).events();
		assertThat(events).hasSize(1 + 4 + 1 + 1);
		for (int i = 0; i <= 5; i++) {
			JsonNode usage = events.get(i).json().path("usage");
			assertThat(usage.path("prompt_tokens").intValue()).isEqualTo(2);
			assertThat(usage.path("completion_tokens").intValue()).isEqualTo(Math.min(i, 4));
		}
	}

	@Test
	void streamedCompletionHasTextChunksWithoutUsageKeyAndTheFingerprintOnTheLast() {
		String body = "{\"model\":\"sim-llama-3-8b\",\"prompt\":\"Once upon a time\",\"max_tokens\":5,\"stream\":true"
				+ INCLUDE_USAGE + "}";
		StreamingClient.Exchange exchange = client.post(COMPLETIONS, body);
		List<StreamingClient.Event> events = exchange.events();
		assertThat(events).hasSize(5 + 1 + 1);
		for (int i = 0; i < 5; i++) {
			JsonNode chunk = events.get(i).json();
			assertThat(chunk.path("id").stringValue()).startsWith("cmpl-");
			assertThat(chunk.path("object").stringValue()).isEqualTo("text_completion");
			assertThat(chunk.path("choices").path(0).path("text").stringValue()).endsWith(" ");
			assertThat(chunk.has("usage")).as("written with exclude_unset").isFalse();
			assertThat(events.get(i).data())
				.contains(",\"logprobs\":null,\"finish_reason\":" + ((i < 4) ? "null" : "\"length\"")
						+ ",\"stop_reason\":null,\"prompt_token_ids\":null,\"token_ids\":null}]");
			assertThat(chunk.has("system_fingerprint")).isEqualTo(i == 4);
		}
		assertThat(events.get(4).data()).endsWith("}],\"system_fingerprint\":null}");
		assertThat(events.get(4).json().path("choices").path(0).path("finish_reason").stringValue())
			.isEqualTo("length");
		assertThat(events.get(5).json().path("usage").path("completion_tokens").intValue()).isEqualTo(5);
		assertThat(events.get(6).done()).isTrue();
	}

	@Test
	void nonStreamingChatCompletionIsOneJsonWithTheWholeTextAndUsage() {
		StreamingClient.Exchange exchange = client.post(CHAT, chatBody("hello", 6, false, ""));
		assertThat(exchange.status()).isEqualTo(200);
		assertThat(exchange.headers().get("Content-Type")).isEqualTo("application/json");
		JsonNode json = exchange.json();
		assertThat(json.path("object").stringValue()).isEqualTo("chat.completion");
		JsonNode choice = json.path("choices").path(0);
		assertThat(choice.path("message").path("role").stringValue()).isEqualTo("assistant");
		assertThat(choice.path("message").path("content").stringValue().split(" ")).hasSize(6);
		assertThat(choice.path("finish_reason").stringValue()).isEqualTo("length");
		assertThat(json.path("usage").path("completion_tokens").intValue()).isEqualTo(6);
	}

	@Test
	void nonStreamingCompletionIsOneTextCompletion() {
		String body = "{\"prompt\":[\"Once \",\"upon\"],\"max_tokens\":3}";
		JsonNode json = client.post(COMPLETIONS, body).json();
		assertThat(json.path("object").stringValue()).isEqualTo("text_completion");
		assertThat(json.path("choices").path(0).path("text").stringValue().split(" ")).hasSize(3);
		assertThat(json.path("usage").path("prompt_tokens").intValue()).isEqualTo(2);
		assertThat(json.path("usage").path("total_tokens").intValue()).isEqualTo(5);
	}

	@Test
	void maxCompletionTokensTakesPrecedenceAndDefaultMaxTokensApplies() {
		String both = "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"max_tokens\":9,\"max_completion_tokens\":2}";
		assertThat(client.post(CHAT, both).json().path("usage").path("completion_tokens").intValue()).isEqualTo(2);
		String none = "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"x\"}]}]}";
		assertThat(client.post(CHAT, none).json().path("usage").path("completion_tokens").intValue()).isEqualTo(128);
	}

	@Test
	void requestIdHeaderNamesTheTraceAndTheResponse() {
		StreamingClient.Exchange exchange = client.post(CHAT, chatBody("hi", 3), Map.of("X-Request-Id", "trace-me"));
		assertThat(exchange.events().get(0).json().path("id").stringValue()).isEqualTo("chatcmpl-trace-me");
		assertThat(server.engine().trace("trace-me")).extracting(TraceEntry::tokenIndex).containsExactly(0, 1, 2);
	}

	@Test
	void headersAreSentAtOnceAndTheFirstEventAfterThePrefill() {
		StreamingClient.Exchange exchange = client.post(CHAT, chatBody("hi", 2),
				Map.of(FaultHeaders.ENGINE_STALL, "0:600"));
		long headers = exchange.headersNanos() - exchange.startNanos();
		long firstEvent = exchange.events().get(0).nanos() - exchange.startNanos();
		assertThat(firstEvent).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(600));
		assertThat(firstEvent - headers).isGreaterThan(TimeUnit.MILLISECONDS.toNanos(300));
	}

	@Test
	void malformedJsonIsBadRequest() {
		assertError(client.post(CHAT, "{\"messages\": [oops"), 400, "BadRequestError", null);
		assertError(client.post(CHAT, "[1,2]"), 400, "BadRequestError", null);
	}

	@Test
	void missingRequiredFieldsAreBadRequest() {
		assertError(client.post(CHAT, "{\"model\":\"sim-llama-3-8b\"}"), 400, "BadRequestError", null);
		assertError(client.post(COMPLETIONS, "{\"max_tokens\":3}"), 400, "BadRequestError", null);
		assertError(client.post(CHAT, chatBody("x", 0, true, "")), 400, "BadRequestError", null);
	}

	@Test
	void streamOptionsWithoutStreamIsBadRequest() {
		StreamingClient.Exchange exchange = client.post(CHAT, chatBody("x", 2, false, INCLUDE_USAGE));
		assertError(exchange, 400, "BadRequestError", null);
		assertThat(exchange.json().path("error").path("message").stringValue()).contains("stream=True");
	}

	@Test
	void unknownModelIsNotFoundAsVllmWritesIt() {
		StreamingClient.Exchange exchange = client.post(CHAT,
				"{\"model\":\"gpt-4\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}");
		assertThat(exchange.body()).isEqualTo(
				"{\"error\":{\"message\":\"The model `gpt-4` does not exist.\",\"type\":\"NotFoundError\",\"param\":\"model\",\"code\":404}}");
		assertThat(exchange.status()).isEqualTo(404);
	}

	@Test
	void promptPlusMaxTokensOverMaxModelLenIsBadRequest() {
		String prompt = "x".repeat(4 * 8000);
		assertError(client.post(CHAT, chatBody(prompt, 500, true, "")), 400, "BadRequestError", null);
		assertError(client.post(CHAT, chatBody("x".repeat(4 * 9000), 1, true, "")), 400, "BadRequestError", null);
	}

	@Test
	void badFaultHeaderIsBadRequest() {
		assertError(client.post(CHAT, chatBody("x", 2), Map.of(FaultHeaders.HTTP_STALL, "soon")), 400,
				"BadRequestError", null);
	}

	@Test
	void modelsListsTheServedModelAsVllm() {
		JsonNode json = client.get("/v1/models").json();
		assertThat(json.path("object").stringValue()).isEqualTo("list");
		JsonNode model = json.path("data").path(0);
		assertThat(model.path("id").stringValue()).isEqualTo("sim-llama-3-8b");
		assertThat(model.path("object").stringValue()).isEqualTo("model");
		assertThat(model.path("owned_by").stringValue()).isEqualTo("vllm");
		assertThat(model.path("max_model_len").intValue()).isEqualTo(8192);
	}

	@Test
	void modelsListsAliasesAndLoraAdaptersAsVllmAndServesThemLikeTheModel() {
		try (SimulatorServer served = FastSimulator.start(
				FastSimulator.properties().aliases(List.of("llama-alias")).loraAdapters(List.of("sql-lora")).build())) {
			StreamingClient other = FastSimulator.client(served);
			JsonNode data = other.get("/v1/models").json().path("data");
			assertThat(data.size()).isEqualTo(3);
			assertThat(data.path(1).path("id").stringValue()).isEqualTo("llama-alias");
			assertThat(data.path(1).path("root").stringValue()).isEqualTo("sim-llama-3-8b");
			assertThat(data.path(1).path("parent").isNull()).isTrue();
			assertThat(data.path(2).path("id").stringValue()).isEqualTo("sql-lora");
			assertThat(data.path(2).path("root").stringValue()).isEqualTo("/adapters/sql-lora");
			assertThat(data.path(2).path("parent").stringValue()).isEqualTo("sim-llama-3-8b");
			for (String model : List.of("llama-alias", "sql-lora")) {
				assertThat(other
					.post(FastSimulator.CHAT,
							"{\"model\":\"" + model
									+ "\",\"max_tokens\":3,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}")
					.status()).as(model).isEqualTo(200);
			}
		}
	}

	@Test
	void healthIsOkWithAnEmptyBody() {
		StreamingClient.Exchange exchange = client.get("/health");
		assertThat(exchange.status()).isEqualTo(200);
		assertThat(exchange.body()).isEmpty();
	}

	@Test
	void aStoppedEngineEndsOpenStreamsWithAnInBandErrorAndFailsHealth() {
		try (SimulatorServer own = FastSimulator.start()) {
			StreamingClient ownClient = FastSimulator.client(own);
			List<StreamingClient.Event> events = ownClient.stream(CHAT, chatBody("hi", 1000), Map.of())
				.doOnNext((event) -> {
					if (!event.done() && !event.content().isEmpty()) {
						own.engine().close();
					}
				})
				.collectList()
				.block(Duration.ofSeconds(10));
			assertThat(events.get(events.size() - 1).done()).isTrue();
			JsonNode error = events.get(events.size() - 2).json().path("error");
			assertThat(error.path("type").stringValue()).isEqualTo("InternalServerError");
			assertThat(error.path("code").intValue()).isEqualTo(500);
			assertThat(ownClient.get("/health").status()).isEqualTo(503);
		}
	}

	@Test
	void unknownPathIsNotFound() {
		assertThat(client.get("/v2/nothing").status()).isEqualTo(404);
	}

	private static void assertError(StreamingClient.Exchange exchange, int status, String type, String param) {
		assertThat(exchange.status()).isEqualTo(status);
		assertThat(exchange.headers().get("Content-Type")).isEqualTo("application/json");
		JsonNode error = exchange.json().path("error");
		assertThat(error.path("type").stringValue()).isEqualTo(type);
		assertThat(error.path("code").intValue()).isEqualTo(status);
		assertThat(error.path("message").stringValue()).isNotBlank();
		assertThat(error.path("param").isNull()).isEqualTo(param == null);
	}

}
