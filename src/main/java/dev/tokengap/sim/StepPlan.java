package dev.tokengap.sim;

import java.util.ArrayList;
import java.util.List;

/**
 * What one engine step computes: the scheduled sequences with their token counts, and
 * what the step therefore costs.
 */
final class StepPlan {

	record Scheduled(SimSequence sequence, int tokens, boolean prefill) {

		/**
		 * The step completes every pending token of the sequence, so it ends with a new
		 * output token.
		 */
		boolean producesToken() {
			return this.tokens == this.sequence.pendingTokens();
		}

	}

	final long stepId;

	private final List<Scheduled> scheduled = new ArrayList<>();

	private int prefillTokens;

	private int totalTokens;

	private long injectedStallNanos;

	private int waiting;

	private double kvCacheUsage;

	StepPlan(long stepId) {
		this.stepId = stepId;
	}

	void add(SimSequence sequence, int tokens, boolean prefill) {
		this.scheduled.add(new Scheduled(sequence, tokens, prefill));
		this.totalTokens += tokens;
		if (prefill) {
			this.prefillTokens += tokens;
		}
	}

	/** The engine's queue and KV cache once the step was scheduled, for the trace. */
	void engineState(int waiting, double kvCacheUsage) {
		this.waiting = waiting;
		this.kvCacheUsage = kvCacheUsage;
	}

	int waiting() {
		return this.waiting;
	}

	double kvCacheUsage() {
		return this.kvCacheUsage;
	}

	void addInjectedStall(long nanos) {
		this.injectedStallNanos += nanos;
	}

	List<Scheduled> scheduled() {
		return this.scheduled;
	}

	boolean isEmpty() {
		return this.scheduled.isEmpty();
	}

	int batchSize() {
		return this.scheduled.size();
	}

	int prefillTokens() {
		return this.prefillTokens;
	}

	int totalTokens() {
		return this.totalTokens;
	}

	boolean injectedStall() {
		return this.injectedStallNanos > 0;
	}

	long costNanos(SimulatorProperties properties) {
		return properties.stepFixedCost().toNanos() + properties.stepCostPerSeq().toNanos() * batchSize()
				+ properties.stepCostPerPrefillToken().toNanos() * this.prefillTokens + this.injectedStallNanos;
	}

}
