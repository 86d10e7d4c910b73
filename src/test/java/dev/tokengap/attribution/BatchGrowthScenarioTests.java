package dev.tokengap.attribution;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.test.context.SpringBootTest;

/**
 * A small batch, then bursts of short requests joining it: every step pays for each
 * sequence.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=0", "tokengap.mode=demo", "tokengap.demo.load=false",
				"tokengap.backend.scrape-interval=400ms", "tokengap.backend.scrape-timeout=350ms",
				"tokengap.attribution.spike-floor=200ms", "tokengap.sim.step-fixed-cost=20ms",
				"tokengap.sim.step-cost-per-seq=20ms" })
class BatchGrowthScenarioTests extends ScenarioSupport {

	@Test
	void attributesABurstOfJoiningRequestsToBatchGrowth() {
		warmUp();
		List<Mono<Void>> streams = new ArrayList<>();
		for (int i = 0; i < 2; i++) {
			streams.add(start(Request.of("batch-steady-" + i, 40, 80)));
		}
		for (int burst = 0; burst < 2; burst++) {
			Mono.delay(Duration.ofMillis(1200)).block();
			for (int i = 0; i < 24; i++) {
				streams.add(start(Request.of("batch-join-" + burst + "-" + i, 40, 1)));
			}
		}
		awaitAll(streams);
		assertAccurate("batch_growth", SpikeCause.BATCH_GROWTH, this::truthFromTrace, 3);
	}

}
