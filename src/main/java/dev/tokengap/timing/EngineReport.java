package dev.tokengap.timing;

/**
 * What the engine itself reported about one request at its end: vLLM's per-request
 * metrics ({@code --enable-per-request-metrics}), the {@code metrics} object of a chat or
 * completions stream's final usage chunk, or of the response in the Responses API's
 * {@code response.completed}. Each figure is NaN (or -1 for the count) when the engine
 * did not send it; vLLM sends it as {@code null} when it has no timing for the request.
 *
 * @param queueMs time the request waited in the scheduler's queue
 * @param firstTokenMs from its scheduling to its first output token, inside the engine
 * @param generationMs from its first output token to its last, inside the engine
 * @param meanItlMs the engine's mean inter-token latency for it
 * @param preemptions how often the engine preempted it, or -1 when the engine does not
 * say (vLLM's own object has no such field; a build that adds {@code num_preemptions} is
 * read)
 */
public record EngineReport(double queueMs, double firstTokenMs, double generationMs, double meanItlMs,
		long preemptions) {

	/**
	 * The same figures with the request's preemptions as the engine counted them
	 * elsewhere (its per-request preemption histogram).
	 * @param report the engine's per-request figures, or null when it sent none
	 * @param preemptions how often the engine preempted the request
	 * @return the figures
	 */
	public static EngineReport withPreemptions(EngineReport report, long preemptions) {
		return (report != null) ? new EngineReport(report.queueMs, report.firstTokenMs, report.generationMs,
				report.meanItlMs, preemptions)
				: new EngineReport(Double.NaN, Double.NaN, Double.NaN, Double.NaN, preemptions);
	}

	/**
	 * @return whether the engine said how long it spent generating
	 */
	public boolean hasGenerationTime() {
		return !Double.isNaN(this.generationMs) && this.generationMs >= 0;
	}

	/**
	 * @return whether the engine said how often it preempted the request
	 */
	public boolean hasPreemptions() {
		return this.preemptions >= 0;
	}

}
