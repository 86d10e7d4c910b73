package dev.tokengap.sim;

/**
 * Ground truth for one output token: which engine step produced it and what that step
 * contained. Times are {@link System#nanoTime()} readings of the simulator's JVM, plus
 * one wall-clock reading.
 *
 * @param requestId the request's {@code X-Request-Id}, else its response id
 * @param tokenIndex 0-based position of the token in the output
 * @param stepId the producing step, counting from 1
 * @param stepStartNanos when the step began
 * @param stepEndNanos when the step ended and the token was handed to the HTTP layer
 * @param stepEndEpochMillis the step's end as epoch milliseconds
 * @param stepDurationNanos the step's length
 * @param batchSize sequences scheduled in the step
 * @param prefillTokensFromOthers prefill tokens of other requests scheduled in the step
 * @param preempted whether this request was preempted and recomputed since its previous
 * token
 * @param injectedStall whether an injected engine stall ({@code X-Sim-Engine-Stall})
 * lengthened a step since this request's previous token
 * @param sincePreviousTokenNanos time since the request's previous token; for token 0
 * since the request's arrival in the engine
 * @param waitingForCapacity requests left in the waiting queue when the step was scheduled
 * (the simulator defers none, so all wait for capacity)
 * @param kvCacheUsage fraction of KV blocks in use when the step was scheduled
 * @param cachedPromptTokens this request's prompt tokens served from the prefix cache
 */
public record TraceEntry(String requestId, int tokenIndex, long stepId, long stepStartNanos, long stepEndNanos,
		long stepEndEpochMillis, long stepDurationNanos, int batchSize, int prefillTokensFromOthers, boolean preempted,
		boolean injectedStall, long sincePreviousTokenNanos, int waitingForCapacity, double kvCacheUsage,
		int cachedPromptTokens) {

}
