package dev.tokengap.attribution;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Spike detection and attribution ({@code tokengap.attribution.*}).
 *
 * @param spikeFloor a gap shorter than this is never a spike
 * @param spikeFactor a gap is a spike at this many times the stream's median gap so far
 * (once it has at least 5 gaps)
 * @param history spike records kept for {@code /actuator/spikes}
 * @param prefillTokens prompt tokens of other requests' prefills inside a gap that count
 * as prefill interference
 * @param batchGrowth running-count ratio across a gap that counts as batch growth
 * @param kvPressure KV-cache usage above which a non-empty waiting queue counts as queue
 * pressure
 * @param logLinesPerSecond spike log lines written per second at most (the rest are
 * counted and the count is given in the next line; 0 logs none)
 * @param prefillRate prompt tokens a second the engine is taken to prefill when its own
 * prefill histograms have not taught tokengap its rate yet: what a prefill or a recompute
 * inside a gap can explain
 * @param stuckAfter how long the engine may have requests running or waiting while no
 * stream receives content before {@code tokengap_engine_stuck} says it is stuck
 */
@ConfigurationProperties("tokengap.attribution")
public record AttributionProperties(@DefaultValue("100ms") Duration spikeFloor, @DefaultValue("4") double spikeFactor,
		@DefaultValue("200") int history, @DefaultValue("1024") int prefillTokens,
		@DefaultValue("1.5") double batchGrowth, @DefaultValue("0.9") double kvPressure,
		@DefaultValue("10") int logLinesPerSecond, @DefaultValue("10000") int prefillRate,
		@DefaultValue("10s") Duration stuckAfter) {

	public AttributionProperties {
		if (spikeFloor.isNegative() || spikeFloor.isZero()) {
			throw new IllegalArgumentException("tokengap.attribution.spike-floor must be positive, got " + spikeFloor);
		}
		if (stuckAfter.isNegative() || stuckAfter.isZero()) {
			throw new IllegalArgumentException("tokengap.attribution.stuck-after must be positive, got " + stuckAfter);
		}
		if (!(spikeFactor >= 1)) {
			throw new IllegalArgumentException(
					"tokengap.attribution.spike-factor must be at least 1, got " + spikeFactor);
		}
		if (!(batchGrowth >= 1)) {
			throw new IllegalArgumentException(
					"tokengap.attribution.batch-growth must be at least 1, got " + batchGrowth);
		}
		requireAtLeast("history", history, 1);
		requireAtLeast("prefill-tokens", prefillTokens, 1);
		requireAtLeast("log-lines-per-second", logLinesPerSecond, 0);
		requireAtLeast("prefill-rate", prefillRate, 1);
	}

	private static void requireAtLeast(String name, int value, int least) {
		if (value < least) {
			throw new IllegalArgumentException(
					"tokengap.attribution." + name + " must be at least " + least + ", got " + value);
		}
	}

}
