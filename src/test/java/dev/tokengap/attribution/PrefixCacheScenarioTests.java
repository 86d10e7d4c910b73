package dev.tokengap.attribution;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.test.context.SpringBootTest;

import dev.tokengap.sim.TraceEntry;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Steady decode streams beside long prompts that share a long document with one computed
 * before, with chunked prefill off as in {@link PrefillInterferenceScenarioTests}: the
 * engine serves the document from its prefix cache and prefills only the rest, so the
 * long prompts hold nobody up. Three engine stalls end just before such a prompt's first
 * token: tokengap sees a long prompt start inside each of those gaps, but the engine's
 * locally computed prompt tokens say it cost no prefill, so the gaps are not blamed on
 * it.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=0", "tokengap.mode=demo", "tokengap.demo.load=false",
				"tokengap.backend.scrape-interval=400ms", "tokengap.backend.scrape-timeout=350ms",
				"tokengap.attribution.spike-floor=200ms", "tokengap.sim.chunked-prefill=false",
				"tokengap.sim.step-fixed-cost=20ms", "tokengap.sim.step-cost-per-prefill-token=50us",
				"tokengap.sim.max-model-len=8192" })
class PrefixCacheScenarioTests extends ScenarioSupport {

	static final int PROMPT_CHARS = 16_000;

	static final int DOCUMENT_CHARS = 15_000;

	/** The document's full 16-token blocks: 15,000 characters at 4 a token. */
	static final int CACHED_TOKENS = DOCUMENT_CHARS / 4 / 16 * 16;

	static final int[] STALL_TOKENS = { 40, 110, 180 };

	@Test
	void longPromptsServedFromThePrefixCacheAreNotPrefillInterference() {
		warmUp();
		prime(Request.of("cache-prime", PROMPT_CHARS, 1).sharingPrefix(DOCUMENT_CHARS));
		List<Mono<Void>> streams = new ArrayList<>();
		for (int i = 0; i < 4; i++) {
			Request decode = Request.of("cache-decode-" + i, 40, 250);
			streams.add(start(
					(i < STALL_TOKENS.length) ? decode.with("X-Sim-Engine-Stall", STALL_TOKENS[i] + ":500") : decode));
		}
		for (int i = 0; i < STALL_TOKENS.length; i++) {
			// Token STALL_TOKENS[i] of cache-decode-i comes from a step 500 ms longer:
			// the long prompt arrives while it runs and is prefilled in the next step.
			awaitTokens("cache-decode-" + i, STALL_TOKENS[i]);
			Mono.delay(Duration.ofMillis(150)).block();
			streams.add(start(longPrompt("cache-long-" + i)));
			if (i + 1 < STALL_TOKENS.length) {
				awaitTokens("cache-decode-" + i, (STALL_TOKENS[i] + STALL_TOKENS[i + 1]) / 2);
				streams.add(start(longPrompt("cache-quiet-" + i)));
			}
		}
		awaitAll(streams);
		for (String id : List.of("cache-long-0", "cache-long-1", "cache-long-2", "cache-quiet-0", "cache-quiet-1")) {
			TraceEntry first = this.simulator.engine().trace(id).get(0);
			assertThat(first.cachedPromptTokens()).as(id + " served from the prefix cache").isEqualTo(CACHED_TOKENS);
		}
		List<SpikeRecord> spikes = spikes();
		assertAccurate("prefix_cache_hits", SpikeCause.ENGINE_OTHER, this::truthFromTrace, 6);
		assertThat(spikes).noneMatch((spike) -> spike.cause().equals(SpikeCause.PREFILL_INTERFERENCE.label()));
		assertThat(spikes).as("gaps inside which tokengap saw a long prompt start")
			.filteredOn((spike) -> spike.evidence().otherPromptTokens() >= 1024)
			.hasSizeGreaterThanOrEqualTo(3)
			.allSatisfy((spike) -> assertThat(spike.evidence().promptTokensComputed()).isLessThan(1024));
	}

	private static Request longPrompt(String id) {
		return Request.of(id, PROMPT_CHARS, 20).sharingPrefix(DOCUMENT_CHARS);
	}

}
