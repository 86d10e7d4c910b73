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
 * nothing engine-side. Without engine samples around the gap (or behind a pool of engines, whose
 * samples describe no one engine) the cause is unknown.
 *
 * <p>
 * Newer engines (vLLM since 2026) say more, and then their word is taken:
 * <ul>
 * <li>Prefill work is the rise of the prompt tokens they computed themselves
 * ({@code source="local_compute"}): a long prompt served from the prefix cache or by a KV transfer
 * did not hold up the step. tokengap's own estimate of other streams' prompts cannot tell such a
 * prompt from a computed one, so it no longer counts toward prefill: the engine's count across the
 * bracketing samples covers every prefill that finished inside the gap, so it bounds what the
 * estimate could add.</li>
 * <li>The queue is the requests waiting for capacity ({@code reason="capacity"}): requests deferred
 * for a LoRA budget, a KV transfer or a blocked status are not pressure on the KV cache.</li>
 * </ul>
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
		if (prefillInterfered(evidence, properties.prefillTokens())) {
			return SpikeCause.PREFILL_INTERFERENCE;
		}
		if (grewMarkedly(evidence.runningBefore(), evidence.runningMax(), properties.batchGrowth())
				|| manyJoined(evidence, properties.batchGrowth())) {
			return SpikeCause.BATCH_GROWTH;
		}
		if (positive(waitingForCapacity(evidence)) && evidence.kvUsageMax() != null
				&& evidence.kvUsageMax() > properties.kvPressure()) {
			return SpikeCause.QUEUE_PRESSURE;
		}
		return SpikeCause.ENGINE_OTHER;
	}

	private static boolean prefillInterfered(Evidence evidence, int tokens) {
		if (evidence.promptTokensComputed() != null) {
			return evidence.promptTokensComputed() >= tokens;
		}
		return evidence.otherPromptTokens() >= tokens || atLeast(evidence.promptTokens(), tokens);
	}

	private static Double waitingForCapacity(Evidence evidence) {
		return (evidence.waitingForCapacityMax() != null) ? evidence.waitingForCapacityMax() : evidence.waitingMax();
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
