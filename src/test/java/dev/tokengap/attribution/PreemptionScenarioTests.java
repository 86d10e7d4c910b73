package dev.tokengap.attribution;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.test.context.SpringBootTest;

/**
 * A KV pool too small for the running set: the engine preempts the newest sequences,
 * which wait until others finish.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=0", "tokengap.mode=demo", "tokengap.demo.load=false",
				"tokengap.backend.scrape-interval=400ms", "tokengap.backend.scrape-timeout=350ms",
				"tokengap.attribution.spike-floor=200ms", "tokengap.sim.step-fixed-cost=10ms",
				"tokengap.sim.num-kv-blocks=150", "tokengap.sim.block-size=16", "tokengap.sim.max-model-len=2048" })
class PreemptionScenarioTests extends ScenarioSupport {

	@Test
	void attributesPreemptedStreamsGapsToPreemption() {
		warmUp();
		List<Mono<Void>> streams = new ArrayList<>();
		for (int i = 0; i < 8; i++) {
			streams.add(start(Request.of("preempt-" + i, 800, 300 + 40 * i)));
		}
		awaitAll(streams);
		assertAccurate("preemption", SpikeCause.PREEMPTION, this::truthFromTrace, 3);
	}

}
