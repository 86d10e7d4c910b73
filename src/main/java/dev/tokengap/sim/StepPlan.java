package dev.tokengap.sim;

import java.util.ArrayList;
import java.util.List;

/**
 * What one engine step computes: the scheduled sequences with their token counts, and
 * what the step therefore costs, part by part.
 *
 * <pre>
 * cost = fixed (step-fixed-cost + step-cost-per-seq x batch)
 *      + new prefill (step-cost-per-prefill-token x tokens of first prefills)
 *      + recompute   (step-cost-per-prefill-token x tokens recomputed after preemption)
 *      + injected stall (X-Sim-Engine-Stall)
 * </pre>
 */
final class StepPlan {

	/**
	 * One sequence's share of the step.
	 *
	 * @param sequence the sequence
	 * @param tokens tokens it computes in the step
	 * @param prefill whether they are prefill (a new prompt's or a recompute) rather than
	 * decode
	 * @param recompute whether they are the recompute of a preempted sequence
	 */
	record Scheduled(SimSequence sequence, int tokens, boolean prefill, boolean recompute) {

		/**
		 * The step completes every pending token of the sequence, so it ends with a new
		 * output token.
		 */
		boolean producesToken() {
			return this.tokens == this.sequence.pendingTokens();
		}

		int newPrefillTokens() {
			return (this.prefill && !this.recompute) ? this.tokens : 0;
		}

		int recomputeTokens() {
			return this.recompute ? this.tokens : 0;
		}

	}

	final long stepId;

	private final List<Scheduled> scheduled = new ArrayList<>();

	private int newPrefillTokens;

	private int recomputeTokens;

	private int totalTokens;

	private long injectedStallNanos;

	private int running;

	private int waiting;

	private double kvCacheUsage;

	StepPlan(long stepId) {
		this.stepId = stepId;
	}

	void add(SimSequence sequence, int tokens, boolean prefill) {
		Scheduled entry = new Scheduled(sequence, tokens, prefill, prefill && sequence.recomputing());
		this.scheduled.add(entry);
		this.totalTokens += tokens;
		this.newPrefillTokens += entry.newPrefillTokens();
		this.recomputeTokens += entry.recomputeTokens();
	}

	/** The engine's sets and KV cache once the step was scheduled, for the trace. */
	void engineState(int running, int waiting, double kvCacheUsage) {
		this.running = running;
		this.waiting = waiting;
		this.kvCacheUsage = kvCacheUsage;
	}

	int running() {
		return this.running;
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

	/** Prefill tokens of the step: new prompts' and recomputes'. */
	int prefillTokens() {
		return this.newPrefillTokens + this.recomputeTokens;
	}

	int newPrefillTokens() {
		return this.newPrefillTokens;
	}

	int recomputeTokens() {
		return this.recomputeTokens;
	}

	int totalTokens() {
		return this.totalTokens;
	}

	boolean injectedStall() {
		return this.injectedStallNanos > 0;
	}

	long injectedStallNanos() {
		return this.injectedStallNanos;
	}

	long fixedCostNanos(SimulatorProperties properties) {
		return properties.stepFixedCost().toNanos() + properties.stepCostPerSeq().toNanos() * batchSize();
	}

	long newPrefillCostNanos(SimulatorProperties properties) {
		return properties.stepCostPerPrefillToken().toNanos() * this.newPrefillTokens;
	}

	long recomputeCostNanos(SimulatorProperties properties) {
		return properties.stepCostPerPrefillToken().toNanos() * this.recomputeTokens;
	}

	long costNanos(SimulatorProperties properties) {
		return fixedCostNanos(properties) + newPrefillCostNanos(properties) + recomputeCostNanos(properties)
				+ this.injectedStallNanos;
	}

}
