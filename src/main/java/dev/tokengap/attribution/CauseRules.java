package dev.tokengap.attribution;

/**
 * Picks a spike's cause from its evidence; the first rule that matches wins.
 *
 * <p>
 * The engine can only explain a gap it produced. When the event arrived from the engine on time
 * (its upstream gap, less the time tokengap's writes waited for the client and so did not read
 * the engine, is under the threshold),
 * the cause is client backpressure if the write waited for the client's socket, and outside the
 * engine (this host) if the write was late to start, whatever the engine was doing; otherwise the engine's evidence is read in the contract's order: preemption, prefill
 * interference (other requests' prompt tokens inside the gap: long prompts), batch growth (the
 * running gauge rose markedly, or many requests joined inside the gap), queue pressure, then
 * nothing engine-side. Without engine samples around the gap the cause is unknown.
 */
final class CauseRules {

	private CauseRules() {
	}

	static SpikeCause decide(Spike spike, Evidence evidence, AttributionProperties properties) {
		if (spike.engineGapNanos() < spike.thresholdNanos()) {
			// On time from the engine: either the client's socket was full (writes waited) or
			// this host was slow to get to the write at all.
			return (2 * spike.socketWaitNanos() >= spike.writeDelayNanos() + spike.earlierWaitNanos())
					? SpikeCause.CLIENT_BACKPRESSURE : SpikeCause.ENGINE_OTHER;
		}
		if (!evidence.engineCovered()) {
			return SpikeCause.UNKNOWN;
		}
		if (positive(evidence.preemptions())) {
			return SpikeCause.PREEMPTION;
		}
		if (evidence.otherPromptTokens() >= properties.prefillTokens()
				|| atLeast(evidence.promptTokens(), properties.prefillTokens())) {
			return SpikeCause.PREFILL_INTERFERENCE;
		}
		if (grewMarkedly(evidence.runningBefore(), evidence.runningMax(), properties.batchGrowth())
				|| manyJoined(evidence, properties.batchGrowth())) {
			return SpikeCause.BATCH_GROWTH;
		}
		if (positive(evidence.waitingMax()) && evidence.kvUsageMax() != null
				&& evidence.kvUsageMax() > properties.kvPressure()) {
			return SpikeCause.QUEUE_PRESSURE;
		}
		return SpikeCause.ENGINE_OTHER;
	}

	/**
	 * Requests that join and leave between two scrapes never show in the running gauge, but
	 * tokengap saw their first tokens arrive inside the gap.
	 */
	private static boolean manyJoined(Evidence evidence, double ratio) {
		double before = (evidence.runningBefore() != null) ? evidence.runningBefore() : 0;
		return evidence.otherFirstTokens() >= Math.max(2, (ratio - 1) * before);
	}

	private static boolean grewMarkedly(Double before, Double max, double ratio) {
		return before != null && max != null && max - before >= 2 && max >= before * ratio;
	}

	private static boolean positive(Double value) {
		return value != null && value > 0;
	}

	private static boolean atLeast(Double value, double threshold) {
		return value != null && value >= threshold;
	}

}
