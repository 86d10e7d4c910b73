package dev.tokengap.attribution;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalManagementPort;

import dev.tokengap.sim.TraceEntry;
import dev.tokengap.testsupport.PrometheusText;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The simulator frozen mid-run: one step of a running stream lasts 7 s (an injected
 * engine stall) while the simulator's {@code /health} keeps answering 200 and its
 * {@code /metrics} keeps saying a request is running. {@code tokengap_engine_stuck} is 0
 * while tokens flow, 1 once nothing has arrived for {@code stuck-after} (2 s here), and 0
 * again once the engine moves on.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=0", "tokengap.mode=demo", "tokengap.demo.load=false",
				"tokengap.backend.scrape-interval=400ms", "tokengap.backend.scrape-timeout=350ms",
				"tokengap.attribution.stuck-after=2s", "tokengap.sim.step-fixed-cost=20ms" })
class StuckEngineIntegrationTests extends ScenarioSupport {

	@LocalManagementPort
	int managementPort;

	@Test
	void anEngineThatHoldsRequestsAndAnswersItsHealthCheckButProducesNothingIsStuck() {
		Mono<Void> stream = start(Request.of("frozen", 40, 80).with("X-Sim-Engine-Stall", "30:7000"));
		awaitTokens("frozen", 10);
		assertThat(stuck()).as("while tokens flow").isZero();
		awaitTokens("frozen", 30);
		await().atMost(Duration.ofSeconds(6)).pollInterval(Duration.ofMillis(200)).until(() -> stuck() == 1);
		List<TraceEntry> trace = this.simulator.engine().trace("frozen");
		assertThat(trace).as("frozen after its 30th token").hasSize(30);
		assertThat(Duration.ofNanos(System.nanoTime() - trace.get(trace.size() - 1).stepEndNanos()))
			.as("not before stuck-after")
			.isGreaterThanOrEqualTo(Duration.ofSeconds(2));
		assertThat(this.simulator.engine().healthy()).as("the engine's /health answers 200 meanwhile").isTrue();
		assertThat(this.simulator.engine().running()).isEqualTo(1);
		stream.block(Duration.ofSeconds(30));
		await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(200)).until(() -> stuck() == 0);
	}

	private double stuck() {
		return PrometheusText.scrape(this.managementPort).value("tokengap_engine_stuck");
	}

}
