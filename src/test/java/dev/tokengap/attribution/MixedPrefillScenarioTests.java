package dev.tokengap.attribution;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.test.context.SpringBootTest;

/**
 * Prefill, batch growth, prefix-cache hits and engine stalls that overlap, judged token
 * by token against the simulator's trace ({@link #truthByCost}): chunked prefill off,
 * every sequence adds 20 ms to a step, every computed prompt token 50 µs. Three decode
 * streams of 250 tokens, and while they run: a new 8,000-token prompt arriving together
 * with six one-token requests (the prefill's 400 ms outweigh the 120 ms the batch grew
 * by); twelve one-token requests alone (batch growth); an engine stall of 500 ms during
 * which a 4,000-token prompt arrives whose document the prefix cache holds (256 tokens
 * computed: the stall is nothing in the engine's scheduling); the same cached prompt
 * without a stall (no spike). The workload runs {@link #RUNS} times on one simulator;
 * each run must get the same verdicts.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=0", "tokengap.mode=demo", "tokengap.demo.load=false",
				"tokengap.backend.scrape-interval=400ms", "tokengap.backend.scrape-timeout=350ms",
				"tokengap.attribution.spike-floor=200ms", "tokengap.sim.chunked-prefill=false",
				"tokengap.sim.step-fixed-cost=20ms", "tokengap.sim.step-cost-per-seq=20ms",
				"tokengap.sim.step-cost-per-prefill-token=50us", "tokengap.sim.max-model-len=16384",
				"tokengap.sim.max-num-batched-tokens=16384" })
class MixedPrefillScenarioTests extends ScenarioSupport {

	static final int DOCUMENT_CHARS = 15_000;

	@Test
	void overlappingPrefillBatchGrowthAndCacheHitsGetTheirTrueCauseEveryRun() {
		warmUp();
		assertRepeatable("mixed_prefill", this::workload, this::truthByCost, 6);
	}

	private List<Mono<Void>> workload(int run) {
		String prefix = "pmix" + run + "-";
		prime(Request.of(prefix + "prime", 16_000, 1).sharingPrefix(DOCUMENT_CHARS));
		List<Mono<Void>> streams = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			Request decode = Request.of(prefix + "decode-" + i, 40, 250);
			streams.add(start((i == 0) ? decode.with("X-Sim-Engine-Stall", "150:500") : decode));
		}
		awaitTokens(prefix + "decode-0", 40);
		streams.add(start(Request.of(prefix + "long", 32_000, 20)));
		for (int i = 0; i < 6; i++) {
			streams.add(start(Request.of(prefix + "join-a" + i, 40, 1)));
		}
		awaitTokens(prefix + "decode-0", 100);
		for (int i = 0; i < 12; i++) {
			streams.add(start(Request.of(prefix + "join-b" + i, 40, 1)));
		}
		awaitTokens(prefix + "decode-0", 150);
		Mono.delay(Duration.ofMillis(150)).block();
		streams.add(start(Request.of(prefix + "cached-stall", 16_000, 20).sharingPrefix(DOCUMENT_CHARS)));
		awaitTokens(prefix + "decode-0", 200);
		streams.add(start(Request.of(prefix + "cached-quiet", 16_000, 20).sharingPrefix(DOCUMENT_CHARS)));
		return streams;
	}

}
