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
 * itself was slow for everyone. Each candidate is credited with the time it can explain
 * of the gap's excess over the stream's own pace ({@link Magnitudes}): the recompute of
 * preempted streams that resumed in the step that ended the gap and the prefill of new
 * prompts at the engine's prefill rate, the sequences the batch grew by at the stream's
 * step cost per sequence. The one that explains the most is chosen when it explains at
 * least as much as is left unexplained; otherwise nothing engine-side explains the gap (a
 * hiccup of the engine: {@code engine_other}). A rise of the preemption counter without a
 * recompute in the gap, and requests waiting for capacity beside a full KV cache, slow
 * nobody's step: kept as matched, never chosen.</li>
 * <li><b>Alone</b>: no other stream was decoding through tokengap to compare with, so a
 * hiccup cannot be told from the engine's state: a preemption counter that rose is the
 * stream's own preemption; else the candidates are weighed as for an engine-wide stall,
 * and what they leave unexplained is put down to the queue when requests waited for
 * capacity beside a full KV cache, else to nothing engine-side.</li>
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
	 * scope the choice rested on, with what each candidate explains.
	 *
	 * @param cause the chosen cause
	 * @param matched every cause whose evidence matched, the chosen one first
	 * @param scope whose stall it was
	 * @param magnitudes the gap's excess and the time each candidate explains of it
	 */
	record Verdict(SpikeCause cause, List<SpikeCause> matched, SpikeScope scope, Magnitudes magnitudes) {

		Verdict(SpikeCause cause, SpikeScope scope) {
			this(cause, List.of(cause), scope, Magnitudes.NONE);
		}

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
			return waited ? new Verdict(SpikeCause.CLIENT_BACKPRESSURE, SpikeScope.CLIENT)
					: new Verdict(SpikeCause.ENGINE_OTHER, SpikeScope.HOST);
		}
		if (evidence.heldBack() >= HELD_BACK_BURST) {
			// The events after the gap came in a burst: the engine had produced them
			// while this stream waited, and something after it (its API server, the
			// network) held them.
			return new Verdict(SpikeCause.ENGINE_OTHER, SpikeScope.AFTER_ENGINE);
		}
		if (!evidence.engineCovered()) {
			return new Verdict(SpikeCause.UNKNOWN, SpikeScope.NO_ENGINE_DATA);
		}
		Magnitudes magnitudes = Magnitudes.of(spike, evidence, properties);
		boolean preempted = positive(evidence.preemptions());
		boolean queued = positive(waitingForCapacity(evidence)) && evidence.kvUsageMax() != null
				&& evidence.kvUsageMax() > properties.kvPressure();
		List<SpikeCause> matched = new ArrayList<>(4);
		if (preempted || magnitudes.recomputeNanos() > 0) {
			matched.add(SpikeCause.PREEMPTION);
		}
		if (magnitudes.prefillNanos() > 0) {
			matched.add(SpikeCause.PREFILL_INTERFERENCE);
		}
		if (grew(evidence, properties.batchGrowth())) {
			matched.add(SpikeCause.BATCH_GROWTH);
		}
		if (queued) {
			matched.add(SpikeCause.QUEUE_PRESSURE);
		}
		SpikeScope scope;
		SpikeCause cause;
		if (evidence.singledOut()) {
			// A prefill, a batch that grew or a queue slows every stream's step alike;
			// only a preemption leaves one stream out while the others keep receiving.
			scope = SpikeScope.SINGLED_OUT;
			cause = preempted ? SpikeCause.PREEMPTION : SpikeCause.ENGINE_OTHER;
		}
		else if (evidence.engineWide()) {
			scope = SpikeScope.ENGINE_WIDE;
			cause = magnitudes.largest(SpikeCause.ENGINE_OTHER);
		}
		else {
			scope = SpikeScope.ALONE;
			cause = preempted ? SpikeCause.PREEMPTION
					: magnitudes.largest(queued ? SpikeCause.QUEUE_PRESSURE : SpikeCause.ENGINE_OTHER);
		}
		matched.remove(cause);
		matched.add(0, cause);
		return new Verdict(cause, List.copyOf(matched), scope, magnitudes);
	}

	private static Double waitingForCapacity(Evidence evidence) {
		return (evidence.waitingForCapacityMax() != null) ? evidence.waitingForCapacityMax() : evidence.waitingMax();
	}

	/**
	 * Whether the batch grew markedly (by 2 and by the ratio) across the gap: a matched
	 * fact, kept in the record; what it explains is {@link Magnitudes#batchNanos()}.
	 */
	private static boolean grew(Evidence evidence, double ratio) {
		double before = (evidence.runningBefore() != null) ? evidence.runningBefore() : 0;
		boolean joined = evidence.otherFirstTokens() >= Math.max(2, (ratio - 1) * before);
		Double max = evidence.runningMax();
		return joined
				|| (evidence.runningBefore() != null && max != null && max - before >= 2 && max >= before * ratio);
	}

	private static boolean positive(Double value) {
		return value != null && value > 0;
	}

}
