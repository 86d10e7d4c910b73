package dev.tokengap.attribution;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalManagementPort;

import dev.tokengap.testsupport.PrometheusText;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The engine's /metrics cannot be read: spikes are still detected, their cause is
 * unknown.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=0", "tokengap.mode=demo", "tokengap.demo.load=false",
				"tokengap.backend.scrape-interval=400ms", "tokengap.backend.scrape-timeout=350ms",
				"tokengap.attribution.spike-floor=200ms", "tokengap.sim.step-fixed-cost=20ms",
				"tokengap.backend.metrics-url=http://127.0.0.1:9/metrics" })
class UnknownScenarioTests extends ScenarioSupport {

	@LocalManagementPort
	int managementPort;

	@Test
	void attributesSpikesToUnknownWithoutEngineData() {
		warmUp();
		List<Mono<Void>> streams = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			streams.add(start(Request.of("unknown-" + i, 40, 100).with("X-Sim-Engine-Stall", "30:500")));
		}
		awaitAll(streams);
		assertAccurate("unknown", SpikeCause.UNKNOWN, (spike) -> SpikeCause.UNKNOWN, 2);
		PrometheusText metrics = PrometheusText.scrape(this.managementPort);
		assertThat(metrics.value("tokengap_backend_up")).isZero();
		assertThat(metrics.value("tokengap_backend_scrape_errors_total")).isPositive();
		assertThat(metrics.value("tokengap_streams_total", "outcome", "completed")).as("streams unaffected")
			.isGreaterThanOrEqualTo(3);
		assertThat(metrics.value("tokengap_gap_spike_seconds_count", "cause", "unknown")).isGreaterThanOrEqualTo(2);
	}

}
