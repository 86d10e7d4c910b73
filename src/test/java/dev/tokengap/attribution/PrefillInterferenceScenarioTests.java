package dev.tokengap.attribution;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.test.context.SpringBootTest;

/**
 * Steady decode streams, then a burst of long prompts with chunked prefill off: each long
 * prefill holds up one step for every running stream.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=0", "tokengap.mode=demo", "tokengap.demo.load=false",
				"tokengap.backend.scrape-interval=400ms", "tokengap.backend.scrape-timeout=350ms",
				"tokengap.sim.chunked-prefill=false", "tokengap.sim.step-fixed-cost=20ms",
				"tokengap.sim.step-cost-per-prefill-token=50us", "tokengap.sim.max-model-len=8192" })
class PrefillInterferenceScenarioTests extends ScenarioSupport {

	@Test
	void attributesLongPrefillsToPrefillInterference() {
		warmUp();
		List<Mono<Void>> streams = new ArrayList<>();
		for (int i = 0; i < 4; i++) {
			streams.add(start(Request.of("prefill-decode-" + i, 40, 250)));
		}
		for (int i = 0; i < 4; i++) {
			Mono.delay(Duration.ofMillis(800)).block();
			streams.add(start(Request.of("prefill-long-" + i, 16_000, 20)));
		}
		awaitAll(streams);
		assertAccurate("prefill_interference", SpikeCause.PREFILL_INTERFERENCE, this::truthFromTrace, 8);
	}

}
