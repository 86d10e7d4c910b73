package dev.tokengap.attribution;

import java.util.ArrayList;
import java.util.List;

/**
 * Picks a spike's cause from its evidence, and keeps every other cause whose evidence
 * matched.
 *
 * <p>
 * The engine can only explain a gap it produced. When the event arrived from the engine
 * on time (its upstream gap, less the time tokengap's writes waited for the client and so
 * did not read the engine, is under the threshold), the cause is client backpressure if
 * the write waited for the client's socket, and outside the engine (this host) if the
 * write was late to start, whatever the engine was doing. Without engine samples around
 * the gap (or behind a pool of engines, whose samples describe no one engine) the cause
 * is unknown.
 *
 * <p>
 * When the events after the gap arrived in a burst (at least {@value #HELD_BACK_BURST}
 * per choice within half an engine step, the stream's pace before the gap), the engine
 * had produced them while the stream waited and they were held up after it (its API
 * server, the network): {@code engine_other}, scope {@code after_engine}, whatever the
 * engine's gauges did.
 *
 * <p>
 * Otherwise what the other streams received during the gap decides which engine evidence
 * can explain it. vLLM's gauges and counters are engine-wide; tokengap sees every
 * stream's events:
 * <ul>
 * <li><b>Singled out</b>: other streams kept receiving content throughout the gap, so the
 * engine kept stepping and only this stream was left out. Of the engine's causes only a
 * preemption (the preemption counter rose) does that; a prefill, a batch that grew or a
 * queue slows every stream's step alike, so they are kept as matched but not chosen, and
 * the cause is otherwise outside the engine's scheduling ({@code engine_other}: its API
 * server, the network).</li>
 * <li><b>Engine-wide</b>: other streams were decoding and none received content: the step
 * itself was slow for everyone. A preemption elsewhere explains it only as far as its
 * recompute does: a stream that had been silent since well before the gap (a preempted
 * sequence) resumed in the step that ended it, with at least {@code prefill-tokens} to
 * recompute; a rise of the preemption counter alone is kept as matched ("preemptions
 * elsewhere in the window") but not chosen. Then prefill interference (recompute and new
 * prompts weighed by their tokens), batch growth, else nothing engine-side (a hiccup of
 * the engine: {@code engine_other}). Requests waiting for capacity beside a full KV cache
 * slow nobody's step: a stall every stream shared is not put down to them (kept as
 * matched).</li>
 * <li><b>Alone</b>: no other stream was decoding through tokengap to compare with, so a
 * hiccup cannot be told from the engine's state: the engine's evidence is read in the
 * contract's order: preemption, prefill interference, batch growth, queue pressure, then
 * nothing engine-side.</li>
 * </ul>
 *
 * <p>
 * Newer engines (vLLM since 2026) say more, and then their word is taken:
 * <ul>
 * <li>Prefill work is the rise of the prompt tokens they computed themselves
 * ({@code source="local_compute"}): a long prompt served from the prefix cache or by a KV
 * transfer did not hold up the step. tokengap's own estimate of other streams' prompts
 * cannot tell such a prompt from a computed one, so it no longer counts toward prefill:
 * the engine's count across the bracketing samples covers every prefill that finished
 * inside the gap, so it bounds what the estimate could add.</li>
 * <li>The queue is the requests waiting for capacity ({@code reason="capacity"}):
 * requests deferred for a LoRA budget, a KV transfer or a blocked status are not pressure
 * on the KV cache.</li>
 * </ul>
 */
final class CauseRules {

	/**
	 * A spike's cause, every cause whose evidence matched (the chosen one first) and the
	 * scope the choice rested on.
	 *
	 * @param cause the chosen cause
	 * @param matched every cause whose evidence matched, the chosen one first
	 * @param scope whose stall it was
	 */
	record Verdict(SpikeCause cause, List<SpikeCause> matched, SpikeScope scope) {

	}

	/**
	 * Events of one choice within half an engine step after a spike that say the engine
	 * had produced them during it: at the usual pace there would be at most one.
	 */
	static final int HELD_BACK_BURST = 4;

	private CauseRules() {
	}

	static SpikeCause decide(Spike spike, Evidence evidence, AttributionProperties properties) {
		return verdict(spike, evidence, properties).cause();
	}

	static Verdict verdict(Spike spike, Evidence evidence, AttributionProperties properties) {
		if (spike.engineGapNanos() < spike.thresholdNanos()) {
			// On time from the engine: either the client's socket was full (writes
			// waited) or this host was slow to get to the write at all.
			boolean waited = 2 * spike.socketWaitNanos() >= spike.writeDelayNanos() + spike.earlierWaitNanos();
			return waited
					? new Verdict(SpikeCause.CLIENT_BACKPRESSURE, List.of(SpikeCause.CLIENT_BACKPRESSURE),
							SpikeScope.CLIENT)
					: new Verdict(SpikeCause.ENGINE_OTHER, List.of(SpikeCause.ENGINE_OTHER), SpikeScope.HOST);
		}
		if (evidence.heldBack() >= HELD_BACK_BURST) {
			// The events after the gap came in a burst: the engine had produced them
			// while this stream waited, and something after it (its API server, the
			// network) held them.
			return new Verdict(SpikeCause.ENGINE_OTHER, List.of(SpikeCause.ENGINE_OTHER), SpikeScope.AFTER_ENGINE);
		}
		if (!evidence.engineCovered()) {
			return new Verdict(SpikeCause.UNKNOWN, List.of(SpikeCause.UNKNOWN), SpikeScope.NO_ENGINE_DATA);
		}
		boolean preempted = positive(evidence.preemptions());
		boolean recomputed = evidence.peersResumed() > 0 && evidence.recomputeTokens() >= properties.prefillTokens();
		long prefill = prefillTokens(evidence);
		boolean prefilled = prefill >= properties.prefillTokens();
		boolean grew = grewMarkedly(evidence.runningBefore(), evidence.runningMax(), properties.batchGrowth())
				|| manyJoined(evidence, properties.batchGrowth());
		boolean queued = positive(waitingForCapacity(evidence)) && evidence.kvUsageMax() != null
				&& evidence.kvUsageMax() > properties.kvPressure();
		List<SpikeCause> matched = new ArrayList<>(4);
		if (preempted || recomputed) {
			matched.add(SpikeCause.PREEMPTION);
		}
		if (prefilled) {
			matched.add(SpikeCause.PREFILL_INTERFERENCE);
		}
		if (grew) {
			matched.add(SpikeCause.BATCH_GROWTH);
		}
		if (queued) {
			matched.add(SpikeCause.QUEUE_PRESSURE);
		}
		SpikeScope scope;
		SpikeCause cause;
		if (evidence.singledOut()) {
			scope = SpikeScope.SINGLED_OUT;
			cause = preempted ? SpikeCause.PREEMPTION : SpikeCause.ENGINE_OTHER;
		}
		else if (evidence.engineWide()) {
			scope = SpikeScope.ENGINE_WIDE;
			if (recomputed && (!prefilled || evidence.recomputeTokens() >= prefill)) {
				cause = SpikeCause.PREEMPTION;
			}
			else {
				// A queue waiting for capacity slows nobody's step: beside other streams
				// that shared the stall it is a state, kept as matched, not the reason.
				cause = firstOf(prefilled, grew, false);
			}
		}
		else {
			scope = SpikeScope.ALONE;
			cause = preempted ? SpikeCause.PREEMPTION : firstOf(prefilled, grew, queued);
		}
		matched.remove(cause);
		matched.add(0, cause);
		return new Verdict(cause, List.copyOf(matched), scope);
	}

	private static SpikeCause firstOf(boolean prefilled, boolean grew, boolean queued) {
		if (prefilled) {
			return SpikeCause.PREFILL_INTERFERENCE;
		}
		if (grew) {
			return SpikeCause.BATCH_GROWTH;
		}
		return queued ? SpikeCause.QUEUE_PRESSURE : SpikeCause.ENGINE_OTHER;
	}

	/**
	 * New prompts' prefill across the gap: the engine's own computed count when it
	 * exports it, else the most of tokengap's estimate and the engine's prompt-token
	 * counter.
	 */
	private static long prefillTokens(Evidence evidence) {
		if (evidence.promptTokensComputed() != null) {
			return (long) Math.max(0, evidence.promptTokensComputed());
		}
		double counted = (evidence.promptTokens() != null) ? evidence.promptTokens() : 0;
		return (long) Math.max(evidence.otherPromptTokens(), counted);
	}

	private static Double waitingForCapacity(Evidence evidence) {
		return (evidence.waitingForCapacityMax() != null) ? evidence.waitingForCapacityMax() : evidence.waitingMax();
	}

	/**
	 * Requests that join and leave between two scrapes never show in the running gauge,
	 * but tokengap saw their first tokens arrive inside the gap.
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

}
