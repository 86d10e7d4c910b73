package dev.tokengap.sim;

import reactor.core.publisher.Sinks;

/**
 * The end of one engine step: every scheduled sequence whose pending tokens are now all
 * computed gets its next token, recorded in the trace and the metrics, then handed to its
 * HTTP stream. Runs on the engine thread.
 */
final class StepCompletion {

	/** When the step ran, read once per step. */
	record Timing(long startNanos, long endNanos, long endEpochMillis) {

	}

	private final StepScheduler scheduler;

	private final VllmMetrics metrics;

	private final TokenTrace trace;

	StepCompletion(StepScheduler scheduler, VllmMetrics metrics, TokenTrace trace) {
		this.scheduler = scheduler;
		this.metrics = metrics;
		this.trace = trace;
	}

	void complete(StepPlan plan, Timing timing) {
		this.metrics.stepCompleted(plan.totalTokens());
		if (plan.injectedStall()) {
			this.scheduler.forEachActive((sequence) -> sequence.stalledSinceLastToken = true);
		}
		for (StepPlan.Scheduled scheduled : plan.scheduled()) {
			SimSequence sequence = scheduled.sequence();
			// Aborted while the step ran: its work is thrown away.
			if (sequence.state != SimSequence.State.RUNNING) {
				continue;
			}
			boolean producesToken = scheduled.producesToken();
			sequence.computed += scheduled.tokens();
			if (scheduled.prefill()) {
				this.scheduler.prefixCache().computed(sequence);
			}
			if (producesToken) {
				emit(plan, scheduled, timing);
			}
		}
	}

	/**
	 * As vLLM when the client goes away: out of the engine at once, kept out of the
	 * latencies and of {@code vllm:request_success_total} (vLLM's API server drops the
	 * request's state before any statistics are recorded, so its {@code abort} series does
	 * not count client aborts).
	 */
	void abort(SimSequence sequence) {
		if (sequence.active()) {
			this.scheduler.remove(sequence, SimSequence.State.ABORTED);
		}
	}

	private void emit(StepPlan plan, StepPlan.Scheduled scheduled, Timing timing) {
		SimSequence sequence = scheduled.sequence();
		int index = sequence.generated;
		record(plan, scheduled, timing);
		sequence.generated++;
		boolean last = sequence.generated >= sequence.maxTokens;
		TokenOutput output = new TokenOutput(index, sequence.nextText(), last ? "length" : null, sequence.promptTokens,
				sequence.generated);
		if (last) {
			this.scheduler.remove(sequence, SimSequence.State.FINISHED);
			this.metrics.finished(sequence);
		}
		// Never blocks: the sink buffers for a slow client; it fails only once the client
		// is gone.
		Sinks.EmitResult result = sequence.sink().tryEmitNext(output);
		if (last) {
			sequence.sink().tryEmitComplete();
		}
		else if (result.isFailure()) {
			abort(sequence);
		}
	}

	private void record(StepPlan plan, StepPlan.Scheduled scheduled, Timing timing) {
		SimSequence sequence = scheduled.sequence();
		int index = sequence.generated;
		long end = timing.endNanos();
		long since = end - ((index == 0) ? sequence.arrivalNanos : sequence.lastTokenNanos);
		int otherPrefill = plan.prefillTokens() - (scheduled.prefill() ? scheduled.tokens() : 0);
		this.trace.add(new TraceEntry(sequence.traceId, index, plan.stepId, timing.startNanos(), end,
				timing.endEpochMillis(), end - timing.startNanos(), plan.batchSize(), otherPrefill,
				sequence.preemptedSinceLastToken, sequence.stalledSinceLastToken, since, plan.waiting(),
				plan.kvCacheUsage(), Math.max(0, sequence.cachedPromptTokens)));
		if (index == 0) {
			sequence.firstTokenNanos = end;
		}
		else {
			sequence.addInterTokenLatency(VllmMetrics.seconds(since));
		}
		sequence.lastTokenNanos = end;
		sequence.preemptedSinceLastToken = false;
		sequence.stalledSinceLastToken = false;
		this.metrics.tokenProduced(sequence, index == 0);
	}

}
