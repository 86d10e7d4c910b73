package dev.tokengap.attribution;

import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

import dev.tokengap.backend.EngineHistory;
import dev.tokengap.backend.EngineSample;

/**
 * Tells an engine that stopped producing while it holds requests: requests running or
 * waiting at the last scrape, its health check answering 200, and for {@code stuck-after}
 * no stream through tokengap received a content event and the engine's own
 * generated-token counter did not rise (so requests sent to it directly, past tokengap,
 * count too). vLLM users report engines in that state: waiting grows, no stream gets a
 * token, {@code /health} stays 200 and nothing pages.
 */
final class StuckEngineDetector {

	private final long stuckAfterNanos;

	private final long staleNanos;

	private final EngineHistory history;

	private final BooleanSupplier healthy;

	private final LongSupplier lastContentNanos;

	private final long sinceNanos;

	/**
	 * @param stuckAfterNanos how long without content makes a busy engine stuck
	 * @param staleNanos how old the last scrape may be for its counts to describe the
	 * engine now
	 * @param history the engine samples
	 * @param healthy whether the engine's health check answers
	 * @param lastContentNanos when any stream last received content ({@code -1}: none)
	 * @param nowNanos now: no content before now counts as content at this time
	 */
	StuckEngineDetector(long stuckAfterNanos, long staleNanos, EngineHistory history, BooleanSupplier healthy,
			LongSupplier lastContentNanos, long nowNanos) {
		this.stuckAfterNanos = stuckAfterNanos;
		this.staleNanos = staleNanos;
		this.history = history;
		this.healthy = healthy;
		this.lastContentNanos = lastContentNanos;
		this.sinceNanos = nowNanos;
	}

	boolean stuck(long nowNanos) {
		EngineSample latest = this.history.latest();
		if (latest == null || nowNanos - latest.nanos() > this.staleNanos || !this.healthy.getAsBoolean()) {
			return false;
		}
		if (!(latest.running() + latest.waiting() > 0)) {
			return false;
		}
		long lastContent = Math.max(this.sinceNanos, this.lastContentNanos.getAsLong());
		return nowNanos - lastContent >= this.stuckAfterNanos && !generated(nowNanos, latest);
	}

	/**
	 * Whether the engine's generated-token counter rose within the last
	 * {@code stuck-after}; false when the engine does not export it.
	 */
	private boolean generated(long nowNanos, EngineSample latest) {
		long from = nowNanos - this.stuckAfterNanos;
		EngineSample[] window = this.history.window(from, latest.nanos());
		if (window.length == 0) {
			return false;
		}
		EngineSample start = window[0];
		for (EngineSample sample : window) {
			if (sample.nanos() <= from) {
				start = sample;
			}
		}
		if (Double.isNaN(latest.generationTokens()) || Double.isNaN(start.generationTokens())) {
			return false;
		}
		return latest.generationTokens() > start.generationTokens();
	}

}
