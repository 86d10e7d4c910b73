package dev.tokengap.sim;

import java.util.Random;

import reactor.core.publisher.Sinks;

/**
 * The end of one engine step: every scheduled sequence whose pending tokens are now all
 * computed gets its next token, recorded in the trace and the metrics, then handed to its
 * HTTP stream. With speculative decoding a decode step also yields the drafts the target
 * model accepted, in the same output (one event carrying several tokens, as vLLM sends
 * them). Runs on the engine thread.
 */
final class StepCompletion {

	/** When the step ran, read once per step. */
	record Timing(long startNanos, long endNanos, long endEpochMillis) {

	}

	private final SimulatorProperties properties;

	private final StepScheduler scheduler;

	private final VllmMetrics metrics;

	private final TokenTrace trace;

	private final Random drafts;

	private final double acceptanceRate;

	StepCompletion(SimulatorProperties properties, StepScheduler scheduler, VllmMetrics metrics, TokenTrace trace,
			Random drafts) {
		this.properties = properties;
		this.scheduler = scheduler;
		this.metrics = metrics;
		this.trace = trace;
		this.drafts = drafts;
		this.acceptanceRate = properties.specAcceptanceRate();
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
	 * request's state before any statistics are recorded, so its {@code abort} series
	 * does not count client aborts).
	 */
	void abort(SimSequence sequence) {
		if (sequence.active()) {
			this.scheduler.remove(sequence, SimSequence.State.ABORTED);
		}
	}

	/**
	 * Drafts of a decode step the target model accepted: each one given the ones before
	 * it, up to the first rejection, and never past the request's max tokens. The prefill
	 * step that yields the first token drafts nothing.
	 */
	private int acceptedDrafts(SimSequence sequence, int index) {
		int proposed = this.metrics.speculativeTokens;
		if (proposed == 0 || index == 0) {
			return 0;
		}
		int accepted = 0;
		while (accepted < proposed && this.drafts.nextDouble() < this.acceptanceRate) {
			accepted++;
		}
		this.metrics.drafted(accepted);
		return Math.min(accepted, Math.max(0, sequence.maxTokens - sequence.generated - 1));
	}

	private void emit(StepPlan plan, StepPlan.Scheduled scheduled, Timing timing) {
		SimSequence sequence = scheduled.sequence();
		int index = sequence.generated;
		record(plan, scheduled, timing);
		int accepted = acceptedDrafts(sequence, index);
		String text = sequence.nextText();
		for (int i = 0; i < accepted; i++) {
			text += sequence.nextText();
		}
		sequence.generated += 1 + accepted;
		boolean last = sequence.generated >= sequence.maxTokens;
		TokenOutput output = new TokenOutput(index, text, last ? "length" : null, sequence.promptTokens,
				sequence.generated, last ? RequestTimings.of(sequence) : null);
		if (last) {
			this.scheduler.remove(sequence, SimSequence.State.FINISHED);
			this.metrics.finished(sequence);
		}
		// Never blocks: the sink buffers for a slow client;
		// it fails only once the client is gone.
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
		int otherNewPrefill = plan.newPrefillTokens() - scheduled.newPrefillTokens();
		int otherRecompute = plan.recomputeTokens() - scheduled.recomputeTokens();
		long stall = plan.injectedStallNanos();
		this.trace.add(new TraceEntry(sequence.traceId, index, plan.stepId, timing.startNanos(), end,
				timing.endEpochMillis(), end - timing.startNanos(), plan.batchSize(), otherNewPrefill + otherRecompute,
				sequence.preemptedSinceLastToken, sequence.stalledSinceLastToken, since, plan.waiting(),
				plan.kvCacheUsage(), Math.max(0, sequence.cachedPromptTokens), otherNewPrefill, otherRecompute,
				scheduled.recomputeTokens(), stall, stall > 0, plan.fixedCostNanos(this.properties),
				plan.newPrefillCostNanos(this.properties), plan.recomputeCostNanos(this.properties), plan.running()));
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
