package dev.tokengap.attribution;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalManagementPort;

import dev.tokengap.testsupport.PrometheusText;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A steady engine: spikes come from outside the engine, and a smooth load has almost
 * none.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=0", "tokengap.mode=demo", "tokengap.demo.load=false",
				"tokengap.backend.scrape-interval=400ms", "tokengap.backend.scrape-timeout=350ms",
				"tokengap.sim.step-fixed-cost=20ms" })
class SteadyEngineScenarioTests extends ScenarioSupport {

	@LocalManagementPort
	int managementPort;

	@Test
	void attributesStallsOutsideTheEngineToEngineOther() {
		warmUp();
		List<Mono<Void>> streams = new ArrayList<>();
		streams.add(start(Request.of("other-http-stall", 40, 150).with("X-Sim-Stall", "60:600")));
		streams.add(start(Request.of("other-engine-stall", 40, 150).with("X-Sim-Engine-Stall", "40:500")));
		streams.add(start(Request.of("other-steady", 40, 150)));
		awaitAll(streams);
		assertAccurate("engine_other", SpikeCause.ENGINE_OTHER,
				(spike) -> spike.requestId().equals("other-http-stall") && spike.tokenIndex() == 60
						? SpikeCause.ENGINE_OTHER : truthFromTrace(spike),
				3);
		String json = PrometheusText.get(this.managementPort, "/actuator/spikes");
		assertThat(json).startsWith("[{\"time\":")
			.contains("\"requestId\":\"other-http-stall\"", "\"tokenIndex\":60", "\"cause\":\"engine_other\"",
					"\"evidence\":{\"engineCovered\":true");
		PrometheusText metrics = PrometheusText.scrape(this.managementPort);
		assertThat(metrics.value("tokengap_backend_up")).isEqualTo(1);
		assertThat(metrics.value("tokengap_backend_requests_running")).isNotNegative();
		assertThat(metrics.matching("tokengap_backend_requests_swapped")).as("absent on a V1 engine").isEmpty();
		assertThat(metrics.value("tokengap_gap_spike_seconds_count", "cause", "engine_other"))
			.isGreaterThanOrEqualTo(3);
	}

	@Test
	void flagsAlmostNoGapsOfASmoothLoad() {
		warmUp();
		List<Mono<Void>> streams = new ArrayList<>();
		for (int i = 0; i < 6; i++) {
			streams.add(start(Request.of("smooth-" + i, 40 + 20 * i, 150)));
			Mono.delay(Duration.ofMillis(300)).block();
		}
		awaitAll(streams);
		List<SpikeRecord> spikes = spikes();
		score("smooth", spikes, this::truthFromTrace);
		assertThat((double) spikes.size() / this.gaps.get()).as("share of gaps flagged as spikes").isLessThan(0.05);
	}

}
