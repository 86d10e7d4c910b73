package dev.tokengap.attribution;

import dev.tokengap.backend.EngineHistory;
import dev.tokengap.backend.EngineSample;

/**
 * The engine's prefill time per computed prompt token, learned from its own prefill
 * histograms ({@code vllm:request_prefill_time_seconds},
 * {@code vllm:request_prefill_kv_computed_tokens}) over the history.
 *
 * <p>
 * A request's prefill time is its whole prefill step: the step's fixed cost, the other
 * sequences' decode in it, any stall, besides its own prompt. So only scrape intervals in
 * which the requests that finished had long prompts on average (at least
 * {@code prefill-tokens}) are read, where the prompt dominates, and of those the fastest
 * per token is taken: everything else in a step only adds time.
 */
final class PrefillRate {

	private PrefillRate() {
	}

	/**
	 * @param history the engine samples
	 * @param minTokens computed prompt tokens per request an interval must average
	 * @return nanoseconds per token, or null when the engine exports no prefill
	 * histograms or no interval qualifies yet
	 */
	static Double learned(EngineHistory history, int minTokens) {
		EngineSample[] samples = history.window(Long.MIN_VALUE / 2, Long.MAX_VALUE / 2);
		double best = Double.NaN;
		for (int i = 1; i < samples.length; i++) {
			EngineSample a = samples[i - 1];
			EngineSample b = samples[i];
			double requests = b.prefillRequests() - a.prefillRequests();
			double tokens = b.prefillComputedTokens() - a.prefillComputedTokens();
			double seconds = b.prefillSeconds() - a.prefillSeconds();
			if (requests >= 1 && tokens >= minTokens * requests && seconds > 0) {
				double perToken = seconds * 1e9 / tokens;
				best = Double.isNaN(best) ? perToken : Math.min(best, perToken);
			}
		}
		return Double.isNaN(best) ? null : best;
	}

}
