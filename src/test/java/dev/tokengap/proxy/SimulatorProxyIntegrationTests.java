package dev.tokengap.proxy;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.http.StreamResponse;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;

import dev.tokengap.sim.SimulatorServer;
import dev.tokengap.testsupport.PrometheusText;
import dev.tokengap.testsupport.StreamingClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Demo mode (no upstream URL): tokengap in front of its in-process simulator, over real
 * HTTP.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = { "management.server.port=0",
		"tokengap.mode=demo", "tokengap.demo.load=false", "tokengap.sim.step-fixed-cost=5ms" })
class SimulatorProxyIntegrationTests {

	@LocalServerPort
	int port;

	@LocalManagementPort
	int managementPort;

	@Autowired
	SimulatorServer simulator;

	@Test
	void clientCancelAbortsTheEngineRequestWithin100Milliseconds() {
		// The first cancels run while the JIT still compiles the whole path on this
		// 2-core machine; the claim is about the path itself, so it is checked once warm.
		for (int warmup = 0; warmup < 2; warmup++) {
			cancelMidStreamAndTimeTheAbort();
		}
		Duration abort = cancelMidStreamAndTimeTheAbort();
		assertThat(abort).isLessThan(Duration.ofMillis(100));
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(PrometheusText.scrape(this.managementPort)
				.value("tokengap_streams_total", "outcome", "client_cancelled")).isEqualTo(3));
	}

	private Duration cancelMidStreamAndTimeTheAbort() {
		String body = "{\"model\":\"sim-llama-3-8b\",\"stream\":true,\"max_tokens\":2000,"
				+ "\"messages\":[{\"role\":\"user\",\"content\":\"tell me everything\"}]}";
		AtomicLong cancelledAt = new AtomicLong();
		StreamingClient.at("http://127.0.0.1:" + this.port)
			.stream("/v1/chat/completions", body, Map.of())
			.filter((event) -> !event.done() && !event.content().isEmpty())
			.doOnCancel(() -> cancelledAt.set(System.nanoTime()))
			.take(3)
			.blockLast(Duration.ofSeconds(10));
		assertThat(cancelledAt.get()).as("the client cancelled mid-stream").isPositive();
		Duration abort = Duration.ofNanos(nanosUntilEngineIdle(Duration.ofSeconds(2)) - cancelledAt.get());
		System.out.printf("client cancel -> engine abort: %.1f ms%n", abort.toNanos() / 1e6);
		return abort;
	}

	/**
	 * Polls the engine's running count every 50 us (Awaitility's executor is too coarse
	 * here).
	 */
	private long nanosUntilEngineIdle(Duration timeout) {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (this.simulator.engine().running() != 0) {
			assertThat(System.nanoTime()).as("engine still running the request").isLessThan(deadline);
			LockSupport.parkNanos(50_000);
		}
		return System.nanoTime();
	}

	@Test
	void openAiJavaClientStreamsAWholeCompletionThroughTokengap() {
		OpenAIClient client = OpenAIOkHttpClient.builder()
			.baseUrl("http://127.0.0.1:" + this.port + "/v1")
			.apiKey("not-needed")
			.build();
		ChatCompletionCreateParams params = ChatCompletionCreateParams.builder()
			.model("sim-llama-3-8b")
			.addUserMessage("Write a short poem about latency.")
			.maxCompletionTokens(16)
			.build();
		StringBuilder text = new StringBuilder();
		int[] contentChunks = new int[1];
		String[] finish = new String[1];
		try (StreamResponse<ChatCompletionChunk> stream = client.chat().completions().createStreaming(params)) {
			stream.stream().flatMap((chunk) -> chunk.choices().stream()).forEach((choice) -> {
				choice.delta().content().filter((c) -> !c.isEmpty()).ifPresent((c) -> {
					text.append(c);
					contentChunks[0]++;
				});
				choice.finishReason().ifPresent((reason) -> finish[0] = reason.asString());
			});
		}
		assertThat(contentChunks[0]).isEqualTo(16);
		assertThat(text.toString().split(" ")).hasSize(16);
		assertThat(finish[0]).isEqualTo("length");
		PrometheusText metrics = PrometheusText.scrape(this.managementPort);
		assertThat(metrics.value("tokengap_time_to_first_token_seconds_count", "model_name", "sim-llama-3-8b"))
			.isPositive();
	}

}
