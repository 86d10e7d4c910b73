package dev.tokengap.backend;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.tokengap.sim.SimulatorProperties;
import dev.tokengap.sim.SimulatorServer;
import dev.tokengap.testsupport.PrometheusText;
import dev.tokengap.testsupport.StreamingClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Standalone tokengap behind a ClusterIP-like address over two engine pods: each new
 * connection lands on the next engine. tokengap must notice the pool, say so, keep its
 * preemption counter honest and stop attributing spikes to engine state that belongs to
 * no one engine.
 */
@ExtendWith(OutputCaptureExtension.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=0", "tokengap.backend.scrape-interval=100ms",
				"tokengap.backend.scrape-timeout=80ms", "tokengap.attribution.spike-floor=200ms",
				"tokengap.metrics.models=sim-llama-3-8b" })
class EnginePoolIntegrationTests {

	private static final String MODEL = "sim-llama-3-8b";

	private static final Pattern PREEMPTIONS = Pattern.compile("(?m)^vllm:num_preemptions_total\\{[^}]*} ([0-9.e+]+)$");

	private static SimulatorServer idle;

	private static SimulatorServer busy;

	private static AlternatingFront front;

	private static double busyPreemptions;

	@LocalManagementPort
	int managementPort;

	@LocalServerPort
	int port;

	@DynamicPropertySource
	static void engines(DynamicPropertyRegistry registry) {
		SimulatorProperties fast = SimulatorProperties.defaults()
			.toBuilder()
			.stepFixedCost(Duration.ofMillis(2))
			.stepCostPerSeq(Duration.ofNanos(100_000))
			.build();
		idle = SimulatorServer.start(fast, "127.0.0.1", 0);
		// A KV pool too small for eight long streams:
		// this engine has preempted before tokengap starts.
		busy = SimulatorServer.start(fast.toBuilder().numKvBlocks(150).blockSize(16).maxModelLen(2048).build(),
				"127.0.0.1", 0);
		preempt(busy);
		front = AlternatingFront.start(Duration.ofMillis(250), idle.port(), busy.port());
		registry.add("tokengap.upstream.url", front::url);
	}

	@AfterAll
	static void stop() {
		front.close();
		idle.close();
		busy.close();
	}

	// First: the one WARN comes when the pool is first seen,
	// which this test brings about.
	@Test
	@Order(1)
	void aPoolIsCountedWarnedAboutAndNeverMirroredAsOneEngine(CapturedOutput output) {
		await().atMost(Duration.ofSeconds(10))
			.until(() -> PrometheusText.scrape(this.managementPort).value("tokengap_backend_engines") == 1);
		front.pool();
		List<Double> mirrored = new ArrayList<>();
		long[] poolSeenAt = { 0 };
		// Watch a dozen reconnects (each landing on the other engine)
		// once the pool is seen.
		await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50)).until(() -> {
			PrometheusText metrics = PrometheusText.scrape(this.managementPort);
			if (!metrics.matching("tokengap_backend_preemptions_total").isEmpty()) {
				mirrored.add(metrics.value("tokengap_backend_preemptions_total"));
			}
			if (poolSeenAt[0] == 0 && metrics.value("tokengap_backend_engines") == 2) {
				poolSeenAt[0] = System.nanoTime();
			}
			return poolSeenAt[0] != 0 && System.nanoTime() - poolSeenAt[0] > Duration.ofSeconds(3).toNanos();
		});
		assertThat(PrometheusText.scrape(this.managementPort).value("tokengap_backend_engines")).isEqualTo(2);
		assertThat(mirrored).as("never backwards").isSorted();
		assertThat(mirrored.get(mirrored.size() - 1)).as("never by another engine's total")
			.isLessThanOrEqualTo(busyPreemptions);
		assertThat(count(output.getOut() + output.getErr(), "More than one engine answers behind")).isEqualTo(1);
		assertThat(output.getOut() + output.getErr()).contains("sidecar");
	}

	@Test
	@Order(2)
	void spikesBehindAPoolAreAttributedToUnknown() {
		front.pool();
		await().atMost(Duration.ofSeconds(30))
			.until(() -> PrometheusText.scrape(this.managementPort).value("tokengap_backend_engines") == 2);
		for (int i = 0; i < 3; i++) {
			String body = "{\"model\":\"" + MODEL + "\",\"stream\":true,\"max_tokens\":40,\"messages\":[{\"role\":"
					+ "\"user\",\"content\":\"pool " + i + "\"}]}";
			assertThat(post(this.port, body, Map.of("X-Sim-Engine-Stall", "20:600"))).contains("[DONE]");
		}
		await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
			PrometheusText metrics = PrometheusText.scrape(this.managementPort);
			assertThat(metrics.value("tokengap_gap_spike_seconds_count", "cause", "unknown")).isGreaterThanOrEqualTo(3);
		});
		PrometheusText metrics = PrometheusText.scrape(this.managementPort);
		assertThat(metrics.value("tokengap_gap_spike_seconds_count")).as("no engine-side guess")
			.isEqualTo(metrics.value("tokengap_gap_spike_seconds_count", "cause", "unknown"));
	}

	private static void preempt(SimulatorServer engine) {
		List<CompletableFuture<?>> streams = new ArrayList<>();
		for (int i = 0; i < 8; i++) {
			String prompt = "preempt-" + i + " " + "p".repeat(800);
			String body = "{\"model\":\"" + MODEL + "\",\"stream\":true,\"max_tokens\":" + (300 + 40 * i)
					+ ",\"messages\":[{\"role\":\"user\",\"content\":\"" + prompt + "\"}]}";
			streams.add(CompletableFuture.runAsync(() -> post(engine.port(), body, Map.of())));
		}
		CompletableFuture.allOf(streams.toArray(CompletableFuture[]::new)).join();
		String metrics = PrometheusText.get(engine.port(), "/metrics");
		Matcher preemptions = PREEMPTIONS.matcher(metrics);
		assertThat(preemptions.find()).isTrue();
		busyPreemptions = Double.parseDouble(preemptions.group(1));
		assertThat(busyPreemptions).as("the busy engine preempted").isPositive();
	}

	/**
	 * POSTs a chat completion and reads its whole body, 60 seconds at most (also used by
	 * {@link EngineRestartIntegrationTests}).
	 */
	static String post(int port, String body, Map<String, String> headers) {
		return StreamingClient.at("http://127.0.0.1:" + port, Duration.ofSeconds(60))
			.post("/v1/chat/completions", body, headers)
			.whole()
			.body();
	}

	private static int count(String text, String part) {
		int count = 0;
		for (int at = text.indexOf(part); at >= 0; at = text.indexOf(part, at + 1)) {
			count++;
		}
		return count;
	}

}
