package dev.tokengap.backend;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.tokengap.sim.SimulatorProperties;
import dev.tokengap.sim.SimulatorServer;
import dev.tokengap.testsupport.PrometheusText;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The engine behind the URL restarts (a new process: a later start time, counters from
 * 0): it is still one engine, and the mirrored preemption counter carries on from where
 * it was.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = { "management.server.port=0",
		"tokengap.backend.scrape-interval=100ms", "tokengap.backend.scrape-timeout=80ms" })
class EngineRestartIntegrationTests {

	private static SimulatorServer before;

	private static SimulatorServer after;

	private static AlternatingFront front;

	@LocalManagementPort
	int managementPort;

	@DynamicPropertySource
	static void engine(DynamicPropertyRegistry registry) {
		before = SimulatorServer.start(SimulatorProperties.defaults()
			.toBuilder()
			.stepFixedCost(Duration.ofMillis(2))
			.stepCostPerSeq(Duration.ofNanos(100_000))
			.numKvBlocks(150)
			.blockSize(16)
			.maxModelLen(2048)
			.build(), "127.0.0.1", 0);
		preempt(before.port());
		front = AlternatingFront.start(Duration.ofMillis(250), before.port());
		registry.add("tokengap.upstream.url", front::url);
	}

	@AfterAll
	static void stop() {
		front.close();
		before.close();
		if (after != null) {
			after.close();
		}
	}

	@Test
	void aRestartedEngineIsTheSameEngineAndItsCounterNeverGoesBackwards() {
		await().atMost(Duration.ofSeconds(10))
			.until(() -> PrometheusText.scrape(this.managementPort).value("tokengap_backend_preemptions_total") > 0);
		double preempted = PrometheusText.scrape(this.managementPort).value("tokengap_backend_preemptions_total");
		after = SimulatorServer.start(
				SimulatorProperties.defaults().toBuilder().stepFixedCost(Duration.ofMillis(2)).build(), "127.0.0.1", 0);
		front.replace(after.port());
		before.close();
		long restartedAt = System.nanoTime();
		List<Double> mirrored = new ArrayList<>();
		await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(50)).until(() -> {
			PrometheusText metrics = PrometheusText.scrape(this.managementPort);
			mirrored.add(metrics.value("tokengap_backend_preemptions_total"));
			assertThat(metrics.value("tokengap_backend_engines")).as("a restart is no pool").isEqualTo(1);
			return metrics.value("tokengap_backend_up") == 1
					&& System.nanoTime() - restartedAt > Duration.ofSeconds(2).toNanos();
		});
		assertThat(mirrored).as("never backwards")
			.isSorted()
			.allSatisfy((value) -> assertThat(value).isEqualTo(preempted));
	}

	private static void preempt(int port) {
		List<CompletableFuture<?>> streams = new ArrayList<>();
		for (int i = 0; i < 8; i++) {
			String body = "{\"model\":\"sim-llama-3-8b\",\"stream\":true,\"max_tokens\":" + (300 + 40 * i)
					+ ",\"messages\":[{\"role\":\"user\",\"content\":\"restart-" + i + " " + "p".repeat(800) + "\"}]}";
			streams.add(CompletableFuture.runAsync(() -> EnginePoolIntegrationTests.post(port, body, Map.of())));
		}
		CompletableFuture.allOf(streams.toArray(CompletableFuture[]::new)).join();
	}

}
