package dev.tokengap.attribution;

import dev.tokengap.backend.EngineSample;

/**
 * Everything known around one spike: what the engine's gauges did across the gap and
 * which other streams finished a prefill inside it. Kept whole in the spike record,
 * whatever the cause.
 *
 * @param engineCovered whether engine samples bracket the gap (else the cause is unknown)
 * @param engineSamples samples between the bracketing ones, inclusive
 * @param preemptions rise of the engine's preemption counter across the gap
 * @param promptTokens rise of the engine's prompt-token counter across the gap
 * (prefix-cache hits included)
 * @param promptTokensComputed rise of the engine's locally computed prompt tokens across
 * the gap ({@code prompt_tokens_by_source_total{source="local_compute"}}), or
 * {@code null} when the engine does not export them
 * @param runningBefore running requests at the last sample before the gap
 * @param runningMax most running requests seen across the gap
 * @param waitingMax most waiting requests seen across the gap
 * @param waitingForCapacityMax most requests seen waiting for capacity across the gap
 * ({@code num_requests_waiting_by_reason{reason="capacity"}}), or {@code null} when the
 * engine does not export them
 * @param kvUsageMax highest KV-cache usage seen across the gap
 * @param otherFirstTokens other streams whose first token arrived inside the gap
 * @param otherPromptTokens their estimated prompt tokens
 * @param peersDecoding other streams through tokengap that were decoding when the gap
 * began
 * @param peersFed those of them that kept receiving content throughout the gap
 * @param peersQuietShare the longest stretch of the gap in which no other stream
 * (decoding, joining or ending) received content, as a share of the gap: under one half,
 * the engine kept stepping for others while this stream waited; 1 when there were none
 * @param peersResumed streams silent since well before the gap (preempted, waiting for
 * their recompute) that resumed in the step that ended it
 * @param recomputeTokens what those cost the engine to recompute: their prompts and
 * outputs so far
 * @param heldBack this stream's events (per choice) that arrived within half an engine
 * step (its pace before the gap) after the gap closed: a burst of them means the engine
 * had produced them during the gap and they were held up after it
 * @param paceNanos this stream's own step before the gap (the median interval of its last
 * few events times its choices), or 0 when it had too few events to tell
 * @param preemptionsInGap the preemption counter's increase over the gap itself, each
 * edge interpolated between the two scrapes around it
 * @param promptTokensInGap the prompt-token counter's increase over the gap, interpolated
 * likewise
 * @param promptTokensComputedInGap the locally computed prompt tokens' increase over the
 * gap, interpolated likewise, or {@code null} when the engine does not export them
 * @param runningAtStart running requests at the gap's start, interpolated between the
 * scrapes around it
 * @param runningAtEnd running requests at the gap's end, interpolated likewise
 * @param prefillNanosPerToken the engine's prefill time per computed prompt token as
 * learned from its own prefill histograms over the history, or {@code null} when it
 * exports none or they hold no long enough prompt yet
 * @param promptComputedShare the share of the engine's prompt tokens it computed itself
 * (not served from its prefix cache or a KV transfer) over all the samples around the
 * gap, or {@code null} when it does not export {@code local_compute}
 * @param promptTokensUnseenInGap prompt tokens the engine computed around the gap (of all
 * prompt tokens, without {@code local_compute}) beyond those of the prompts whose first
 * token tokengap saw there, credited with the gap's share of the bracketing scrapes'
 * span: prompts sent to the engine past tokengap
 */
public record Evidence(boolean engineCovered, int engineSamples, Double preemptions, Double promptTokens,
		Double promptTokensComputed, Double runningBefore, Double runningMax, Double waitingMax,
		Double waitingForCapacityMax, Double kvUsageMax, long otherFirstTokens, long otherPromptTokens,
		int peersDecoding, int peersFed, double peersQuietShare, long peersResumed, long recomputeTokens, int heldBack,
		long paceNanos, Double preemptionsInGap, Double promptTokensInGap, Double promptTokensComputedInGap,
		Double runningAtStart, Double runningAtEnd, Double prefillNanosPerToken, Double promptComputedShare,
		Double promptTokensUnseenInGap) {

	/**
	 * Prompt tokens of the streams through tokengap whose first token arrived in a
	 * stretch of time.
	 */
	interface FirstTokens {

		/**
		 * @param fromNanos start, exclusive
		 * @param toNanos end, inclusive
		 * @return {count, prompt tokens}
		 */
		long[] between(long fromNanos, long toNanos);

	}

	/**
	 * Gathers the evidence of one spike, without other streams' view.
	 * @param spike the spike
	 * @param window engine samples around the gap, oldest first
	 * @param staleNanos how far from the gap's edges a bracketing sample may be
	 * @param firstTokens other streams' first tokens: {count, prompt tokens} inside the
	 * gap
	 * @return the evidence
	 */
	static Evidence of(Spike spike, EngineSample[] window, long staleNanos, long[] firstTokens) {
		return of(spike, window, staleNanos, firstTokens, (from, to) -> firstTokens, PeerView.NONE, new long[] { 0, 0 },
				0, 0, null);
	}

	/**
	 * Gathers the evidence of one spike.
	 * @param spike the spike
	 * @param window engine samples around the gap, oldest first
	 * @param staleNanos how far from the gap's edges a bracketing sample may be
	 * @param firstTokens other streams' first tokens: {count, prompt tokens} inside the
	 * gap
	 * @param seen the first tokens tokengap saw in any stretch (for the scrapes around
	 * the gap)
	 * @param peers what the other streams received during the gap
	 * @param resumed {count, recompute tokens} of the waiting streams that resumed at its
	 * end
	 * @param heldBack this stream's events in a burst right after the gap
	 * @param paceNanos this stream's own step before the gap, 0 when unknown
	 * @param prefillNanosPerToken the engine's learned prefill time per token, or null
	 * @return the evidence
	 */
	static Evidence of(Spike spike, EngineSample[] window, long staleNanos, long[] firstTokens, FirstTokens seen,
			PeerView peers, long[] resumed, int heldBack, long paceNanos, Double prefillNanosPerToken) {
		int before = -1;
		int after = -1;
		for (int i = 0; i < window.length; i++) {
			long t = window[i].nanos();
			if (t <= spike.previousArrivalNanos() && t >= spike.previousArrivalNanos() - staleNanos) {
				before = i;
			}
			if (after < 0 && t >= spike.arrivalNanos() && t <= spike.arrivalNanos() + staleNanos) {
				after = i;
			}
		}
		if (before < 0 || after < 0) {
			return new Evidence(false, 0, null, null, null, null, null, null, null, null, firstTokens[0],
					firstTokens[1], peers.decoding(), peers.fed(), quietShare(spike, peers), resumed[0], resumed[1],
					heldBack, paceNanos, null, null, null, null, null, prefillNanosPerToken, null, null);
		}
		double runningMax = 0;
		double waitingMax = 0;
		double capacityMax = 0;
		double kvMax = 0;
		for (int i = before; i <= after; i++) {
			runningMax = Math.max(runningMax, window[i].running());
			waitingMax = Math.max(waitingMax, window[i].waiting());
			// NaN, once any sample lacks it, stays NaN:
			// the count is then not used at all.
			capacityMax = Math.max(capacityMax, window[i].waitingForCapacity());
			kvMax = Math.max(kvMax, window[i].kvUsage());
		}
		EngineSample first = window[before];
		EngineSample last = window[after];
		GapCounters gap = new GapCounters(window, before, after, spike.previousArrivalNanos(), spike.arrivalNanos());
		return new Evidence(true, after - before + 1, delta(first.preemptions(), last.preemptions()),
				delta(first.promptTokens(), last.promptTokens()),
				delta(first.promptTokensComputed(), last.promptTokensComputed()), first.running(), runningMax,
				waitingMax, Double.isNaN(capacityMax) ? null : capacityMax, kvMax, firstTokens[0], firstTokens[1],
				peers.decoding(), peers.fed(), quietShare(spike, peers), resumed[0], resumed[1], heldBack, paceNanos,
				gap.increase(EngineSample::preemptions), gap.increase(EngineSample::promptTokens),
				gap.increase(EngineSample::promptTokensComputed), gap.atStart(EngineSample::running),
				gap.atEnd(EngineSample::running), prefillNanosPerToken, computedShare(window),
				unseen(spike, first, last, seen, computedShare(window)));
	}

	/**
	 * The engine's computed share of its prompt tokens over every sample given: the
	 * samples after the gap included, so a prompt counted by a scrape just after the
	 * bracketing one still weighs.
	 */
	private static Double computedShare(EngineSample[] window) {
		EngineSample first = window[0];
		EngineSample last = window[window.length - 1];
		Double computed = delta(first.promptTokensComputed(), last.promptTokensComputed());
		Double all = delta(first.promptTokens(), last.promptTokens());
		if (computed == null) {
			return null;
		}
		return (all == null || all <= 0) ? 1.0 : Math.min(1, Math.max(0, computed / all));
	}

	private static Double unseen(Spike spike, EngineSample first, EngineSample last, FirstTokens seen, Double share) {
		Double counted = (share != null) ? delta(first.promptTokensComputed(), last.promptTokensComputed())
				: delta(first.promptTokens(), last.promptTokens());
		if (counted == null) {
			return null;
		}
		double around = seen.between(first.nanos() - 1, last.nanos())[1] * ((share != null) ? share : 1);
		long span = Math.max(1, last.nanos() - first.nanos());
		double inGap = Math.min(1, (double) (spike.arrivalNanos() - spike.previousArrivalNanos()) / span);
		return Math.max(0, counted - around) * inGap;
	}

	/**
	 * @return whether other streams kept receiving content while this one waited: no
	 * stretch of the gap as long as half of it went without another stream's event
	 */
	boolean singledOut() {
		return this.peersQuietShare < 0.5;
	}

	/**
	 * @return whether other streams were decoding when the gap began and, for at least
	 * half of it at a stretch, none received content
	 */
	boolean engineWide() {
		return this.peersDecoding > 0 && !singledOut();
	}

	private static double quietShare(Spike spike, PeerView peers) {
		long gap = Math.max(1, spike.upstreamGapNanos());
		return Math.min(1.0, (double) Math.min(peers.quietNanos(), gap) / gap);
	}

	private static Double delta(double from, double to) {
		return (Double.isNaN(from) || Double.isNaN(to)) ? null : to - from;
	}

}
