package dev.tokengap.attribution;

import dev.tokengap.backend.EngineSample;

/**
 * How often the engine preempted one request, read from its per-request preemption
 * histogram ({@code vllm:request_num_preemptions}, vLLM since 2026-09) across the
 * request's end. The engine observes the histogram once per finished request, so its
 * count and sum between a scrape before the request finished and one after it hold this
 * request's preemptions among those of the requests that finished meanwhile:
 *
 * <pre>
 * count rose   sum rose   this request was preempted
 * &gt;= 1         0          0 times (none that finished then was)
 * 1            n          n times (it finished alone)
 * otherwise               unknown
 * </pre>
 *
 * The engine does not say which request was preempted when; this is the per-request
 * answer to "was this stream's own preemption behind its stall", in place of the
 * {@code num_preemptions} that vLLM's per-request {@code metrics} object lacks.
 */
final class FinishedPreemptions {

	/** Unknown: the engine has no histogram, or other requests finished alongside. */
	static final long UNKNOWN = -1;

	private FinishedPreemptions() {
	}

	/**
	 * @param window engine samples, oldest first
	 * @param finishedAfter a time before the engine can have finished the request
	 * @param endNanos when the stream ended, after the engine finished the request
	 * @return the request's preemptions, or {@link #UNKNOWN}
	 */
	static long of(EngineSample[] window, long finishedAfter, long endNanos) {
		EngineSample before = null;
		EngineSample after = null;
		for (EngineSample sample : window) {
			if (sample.nanos() <= finishedAfter) {
				before = sample;
			}
			if (after == null && sample.nanos() >= endNanos) {
				after = sample;
			}
		}
		if (before == null || after == null) {
			return UNKNOWN;
		}
		double finished = after.finishedRequests() - before.finishedRequests();
		double preemptions = after.finishedRequestPreemptions() - before.finishedRequestPreemptions();
		if (Double.isNaN(finished) || Double.isNaN(preemptions) || finished < 1 || preemptions < 0) {
			return UNKNOWN;
		}
		if (preemptions == 0) {
			return 0;
		}
		return (finished == 1) ? Math.round(preemptions) : UNKNOWN;
	}

}
