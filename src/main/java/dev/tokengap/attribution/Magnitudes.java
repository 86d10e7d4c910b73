package dev.tokengap.attribution;

import java.util.ArrayList;
import java.util.List;

/**
 * How much of a gap each engine-side candidate can explain: the gap's excess over the
 * stream's own pace, and the time of it that the prefill of new prompts, the recompute of
 * preempted streams and the sequences the batch grew by account for.
 *
 * <pre>
 * excess     = the engine's part of the gap - pace (the stream's own step before the gap)
 * prefill    = computed prompt tokens that finished inside the gap x prefill time per token
 * recompute  = tokens of preempted streams that resumed in the step ending the gap
 *              x prefill time per token
 * batch      = pace x sequences added / sequences before   (a decode step's cost per
 *              sequence, taken as proportional: an upper bound, a step has fixed costs;
 *              before: the streams through tokengap decoding when the gap began, this
 *              one included, or with none the running count at the last scrape before
 *              it; added: the streams whose first token arrived inside the gap, or the
 *              running count at the gap's end, interpolated between the scrapes around
 *              it, less before, whichever is more)
 * unexplained = excess - (prefill + recompute + batch), at least 0
 * </pre>
 *
 * Prefill and recompute count only from {@code prefill-tokens} tokens on. The prefill
 * time per token is the engine's own (its prefill histograms over the history) when it
 * has taught tokengap one, else {@code 1 / prefill-rate}.
 *
 * @param paceNanos the stream's step before the gap
 * @param excessNanos the gap's excess over it
 * @param prefillTokens computed prompt tokens of new prompts inside the gap
 * @param prefillNanos what their prefill explains
 * @param recomputeTokens tokens recomputed for preempted streams in the step ending the
 * gap
 * @param recomputeNanos what their recompute explains
 * @param batchBefore sequences running at the gap's start
 * @param batchAdded sequences the batch grew by
 * @param batchNanos what the added sequences explain
 * @param nanosPerToken the prefill time per token used
 * @param rateLearned whether it was learned from the engine
 */
record Magnitudes(long paceNanos, long excessNanos, long prefillTokens, long prefillNanos, long recomputeTokens,
		long recomputeNanos, double batchBefore, double batchAdded, long batchNanos, double nanosPerToken,
		boolean rateLearned) {

	/** Nothing weighed: the engine's evidence was not read. */
	static final Magnitudes NONE = new Magnitudes(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, false);

	static Magnitudes of(Spike spike, Evidence evidence, AttributionProperties properties) {
		long pace = (evidence.paceNanos() > 0) ? evidence.paceNanos()
				: (long) (spike.thresholdNanos() / properties.spikeFactor());
		long excess = Math.max(0, spike.engineGapNanos() - pace);
		boolean learned = evidence.prefillNanosPerToken() != null;
		double perToken = learned ? evidence.prefillNanosPerToken() : 1e9 / properties.prefillRate();
		long prefillTokens = prefillTokens(evidence);
		long prefill = (prefillTokens >= properties.prefillTokens()) ? (long) (prefillTokens * perToken) : 0;
		long recomputeTokens = (evidence.peersResumed() > 0) ? evidence.recomputeTokens() : 0;
		long recompute = (recomputeTokens >= properties.prefillTokens()) ? (long) (recomputeTokens * perToken) : 0;
		// The pace was measured over steps the stream shared with the streams decoding
		// beside it: those through tokengap are counted exactly; a gauge sample may
		// catch requests that stayed for one step.
		double before = Math.max(1, (evidence.peersDecoding() > 0) ? evidence.peersDecoding() + 1
				: (evidence.runningBefore() != null) ? evidence.runningBefore() : 1);
		double grown = (evidence.runningAtEnd() != null) ? evidence.runningAtEnd() - before : 0;
		double added = Math.max(evidence.otherFirstTokens(), grown);
		long batch = (added > 0) ? (long) (pace * added / before) : 0;
		return new Magnitudes(pace, excess, prefillTokens, prefill, recomputeTokens, recompute, before, added, batch,
				perToken, learned);
	}

	/**
	 * New prompts' computed tokens inside the gap: tokengap's estimate of the prompts
	 * whose first token arrived inside it, scaled by the share of its prompt tokens the
	 * engine computed itself around the gap (a prompt served from the prefix cache costs
	 * the step almost nothing), plus the tokens the engine computed around the gap beyond
	 * the prompts tokengap saw there (prompts sent past tokengap), credited with the
	 * gap's share of the scrapes' span.
	 */
	private static long prefillTokens(Evidence evidence) {
		double share = (evidence.promptComputedShare() != null) ? evidence.promptComputedShare() : 1;
		double unseen = (evidence.promptTokensUnseenInGap() != null) ? evidence.promptTokensUnseenInGap() : 0;
		return (long) (evidence.otherPromptTokens() * share + unseen);
	}

	/** What the candidates leave of the excess. */
	long unexplainedNanos() {
		return Math.max(0, this.excessNanos - this.prefillNanos - this.recomputeNanos - this.batchNanos);
	}

	/**
	 * The candidate that explains the most, when it explains at least as much as is left
	 * unexplained (ties: recompute, prefill, batch); else {@code otherwise}.
	 */
	SpikeCause largest(SpikeCause otherwise) {
		long best = Math.max(this.recomputeNanos, Math.max(this.prefillNanos, this.batchNanos));
		if (best <= 0 || best < unexplainedNanos()) {
			return otherwise;
		}
		if (best == this.recomputeNanos) {
			return SpikeCause.PREEMPTION;
		}
		return (best == this.prefillNanos) ? SpikeCause.PREFILL_INTERFERENCE : SpikeCause.BATCH_GROWTH;
	}

	/**
	 * Each candidate with the milliseconds it explains, in the record's order: recompute,
	 * prefill, batch growth, then what is left unexplained.
	 */
	List<SpikeRecord.Explained> explained() {
		List<SpikeRecord.Explained> all = new ArrayList<>(4);
		all.add(new SpikeRecord.Explained(SpikeCause.PREEMPTION.label(), millis(this.recomputeNanos),
				"recompute of " + this.recomputeTokens + " tokens of preempted streams"));
		all.add(new SpikeRecord.Explained(SpikeCause.PREFILL_INTERFERENCE.label(), millis(this.prefillNanos),
				"prefill of " + this.prefillTokens + " computed prompt tokens"));
		all.add(new SpikeRecord.Explained(SpikeCause.BATCH_GROWTH.label(), millis(this.batchNanos),
				"batch growth " + round(this.batchBefore) + " -> " + round(this.batchBefore + this.batchAdded)));
		all.add(new SpikeRecord.Explained(SpikeCause.ENGINE_OTHER.label(), millis(unexplainedNanos()), "unexplained"));
		return List.copyOf(all);
	}

	/**
	 * In words, e.g. "902 ms over the stream's 22 ms pace: batch growth 7 -> 9 explains
	 * ~5 ms, prefill of 3634 tokens ~363 ms; 534 ms (59%) unexplained".
	 */
	String text() {
		StringBuilder text = new StringBuilder().append(Math.round(millis(this.excessNanos)))
			.append(" ms over the stream's ")
			.append(Math.round(millis(this.paceNanos)))
			.append(" ms pace: ");
		List<String> parts = new ArrayList<>(3);
		if (this.recomputeTokens > 0) {
			parts.add("recompute of " + this.recomputeTokens + " tokens explains ~" + ms(this.recomputeNanos));
		}
		parts.add(prefillText());
		parts.add((this.batchAdded > 0) ? "batch growth " + round(this.batchBefore) + " -> "
				+ round(this.batchBefore + this.batchAdded) + " explains ~" + ms(this.batchNanos) : "no batch growth");
		text.append(String.join(", ", parts));
		long unexplained = unexplainedNanos();
		long share = (this.excessNanos > 0) ? Math.round(100.0 * unexplained / this.excessNanos) : 0;
		return text.append("; ").append(ms(unexplained)).append(" (").append(share).append("%) unexplained").toString();
	}

	private String prefillText() {
		if (this.prefillNanos > 0) {
			return "prefill of " + this.prefillTokens + " tokens explains ~" + ms(this.prefillNanos);
		}
		return (this.prefillTokens > 0) ? "prefill of " + this.prefillTokens + " tokens (too few to count)"
				: "no prefill";
	}

	private static String ms(long nanos) {
		return Math.round(millis(nanos)) + " ms";
	}

	private static String round(double value) {
		return Long.toString(Math.round(value));
	}

	private static double millis(long nanos) {
		return Math.round(nanos / 1e4) / 100.0;
	}

}
