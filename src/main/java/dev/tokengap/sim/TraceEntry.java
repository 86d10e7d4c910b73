package dev.tokengap.sim;

/**
 * Ground truth for one output token: which engine step produced it, what that step
 * contained and what its time was spent on, so a judge can tell the causes of a late
 * token apart. Times are {@link System#nanoTime()} readings of the simulator's JVM, plus
 * one wall-clock reading.
 *
 * <pre>
 * stepDurationNanos ~ fixedCostNanos + newPrefillCostNanos + recomputeCostNanos + stepStallNanos
 *                     (the step may overrun its cost by the engine thread's wake-up jitter)
 * </pre>
 *
 * @param requestId the request's {@code X-Request-Id}, else its response id
 * @param tokenIndex 0-based position of the token in the output
 * @param stepId the producing step, counting from 1
 * @param stepStartNanos when the step began
 * @param stepEndNanos when the step ended and the token was handed to the HTTP layer
 * @param stepEndEpochMillis the step's end as epoch milliseconds
 * @param stepDurationNanos the step's length
 * @param batchSize sequences scheduled in the step
 * @param prefillTokensFromOthers prefill tokens of other requests scheduled in the step:
 * {@code newPrefillTokensFromOthers + recomputeTokensFromOthers}
 * @param preempted whether this request was preempted and recomputed since its previous
 * token
 * @param injectedStall whether an injected engine stall ({@code X-Sim-Engine-Stall})
 * lengthened a step since this request's previous token (the producing step or an earlier
 * one)
 * @param sincePreviousTokenNanos time since the request's previous token; for token 0
 * since the request's arrival in the engine
 * @param waitingForCapacity requests left in the waiting queue when the step was
 * scheduled (the simulator defers none, so all wait for capacity)
 * @param kvCacheUsage fraction of KV blocks in use when the step was scheduled
 * @param cachedPromptTokens this request's prompt tokens served from the prefix cache
 * @param newPrefillTokensFromOthers tokens of other requests' first prefill (new prompts,
 * their prefix-cache hits excluded) scheduled in the step
 * @param recomputeTokensFromOthers tokens of other requests recomputed in the step
 * because they were preempted (re-prefilled, their prefix-cache hits excluded)
 * @param ownRecomputeTokens this request's own recompute tokens in the step; 0 unless it
 * was preempted since its previous token
 * @param stepStallNanos the injected engine stall ({@code X-Sim-Engine-Stall}, of any
 * request) added to the producing step itself, 0 if none
 * @param engineWideStall whether the producing step was stalled
 * ({@code stepStallNanos > 0}): an engine stall pauses the whole step, so every token it
 * produces is late alike, whichever request asked for the stall
 * @param fixedCostNanos the step's cost regardless of its content: step-fixed-cost plus
 * step-cost-per-seq times the batch size
 * @param newPrefillCostNanos step-cost-per-prefill-token times the first-prefill tokens
 * of every request in the step, this one's included
 * @param recomputeCostNanos step-cost-per-prefill-token times the recompute tokens of
 * every request in the step, this one's included
 * @param running sequences in the running set when the step was scheduled (at least the
 * batch, more when the token budget left some out)
 */
public record TraceEntry(String requestId, int tokenIndex, long stepId, long stepStartNanos, long stepEndNanos,
		long stepEndEpochMillis, long stepDurationNanos, int batchSize, int prefillTokensFromOthers, boolean preempted,
		boolean injectedStall, long sincePreviousTokenNanos, int waitingForCapacity, double kvCacheUsage,
		int cachedPromptTokens, int newPrefillTokensFromOthers, int recomputeTokensFromOthers, int ownRecomputeTokens,
		long stepStallNanos, boolean engineWideStall, long fixedCostNanos, long newPrefillCostNanos,
		long recomputeCostNanos, int running) {

	public TraceEntry {
		if (engineWideStall != (stepStallNanos > 0)) {
			throw new IllegalArgumentException("engineWideStall must be stepStallNanos > 0");
		}
	}

}
