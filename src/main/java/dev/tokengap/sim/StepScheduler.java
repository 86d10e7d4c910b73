package dev.tokengap.sim;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.function.Consumer;

/**
 * Continuous batching as vLLM v1 schedules it: running sequences first, in admission
 * order, then the waiting queue in FIFO order, all sharing one token budget per step. A
 * running sequence that needs a KV block when none is free preempts the most recently
 * admitted one by recompute. A prompt's blocks found in the prefix cache are not
 * prefilled again. Owned by the engine thread.
 */
final class StepScheduler {

	private final SimulatorProperties properties;

	private final KvBlockPool pool;

	private final PrefixCache prefixCache;

	private final VllmMetrics metrics;

	// Admission order: the last element is the first to be preempted.
	private final List<SimSequence> running = new ArrayList<>();

	private final Deque<SimSequence> waiting = new ArrayDeque<>();

	private long preemptions;

	private boolean preemptedInStep;

	StepScheduler(SimulatorProperties properties) {
		this(properties, new VllmMetrics());
	}

	StepScheduler(SimulatorProperties properties, VllmMetrics metrics) {
		this.properties = properties;
		this.pool = new KvBlockPool(properties.blockSize(), properties.numKvBlocks());
		this.prefixCache = new PrefixCache(properties.prefixCaching(), properties.blockSize(),
				properties.numKvBlocks());
		this.metrics = metrics;
	}

	void enqueue(SimSequence sequence) {
		sequence.state = SimSequence.State.WAITING;
		this.waiting.addLast(sequence);
	}

	StepPlan schedule(long stepId) {
		StepPlan plan = new StepPlan(stepId);
		this.preemptedInStep = false;
		int budget = scheduleRunning(plan, this.properties.maxNumBatchedTokens());
		// As vLLM: a step that had to preempt admits nobody new.
		if (!this.preemptedInStep) {
			admitWaiting(plan, budget);
		}
		applyEngineStalls(plan);
		plan.engineState(this.running.size(), this.waiting.size(), this.pool.usage());
		return plan;
	}

	private int scheduleRunning(StepPlan plan, int budget) {
		for (int i = 0; i < this.running.size() && budget > 0; i++) {
			SimSequence sequence = this.running.get(i);
			if (!reserveBlocks(sequence)) {
				break;
			}
			int tokens = chunk(sequence.pendingTokens(), budget);
			plan.add(sequence, tokens, !sequence.decoding());
			budget -= tokens;
		}
		return budget;
	}

	private void admitWaiting(StepPlan plan, int budget) {
		while (budget > 0 && !this.waiting.isEmpty() && this.running.size() < this.properties.maxNumSeqs()) {
			SimSequence sequence = this.waiting.peekFirst();
			int cached = this.prefixCache.cachedTokens(sequence);
			int tokens = chunk(sequence.pendingTokens() - cached, budget);
			// Without chunking a prompt over the budget still goes in whole,
			// but alone among prefills.
			if (tokens > budget && plan.prefillTokens() > 0) {
				return;
			}
			int blocks = this.pool.blocksFor(sequence.totalTokens());
			if (!this.pool.tryTake(blocks)) {
				return;
			}
			this.waiting.pollFirst();
			admit(sequence, blocks, cached);
			plan.add(sequence, tokens, true);
			budget -= tokens;
		}
	}

	private void admit(SimSequence sequence, int blocks, int cached) {
		sequence.blocks = blocks;
		sequence.state = SimSequence.State.RUNNING;
		sequence.computed = cached;
		this.running.add(sequence);
		if (sequence.cachedPromptTokens < 0) {
			sequence.cachedPromptTokens = cached;
			sequence.firstScheduledNanos = System.nanoTime();
		}
		if (this.prefixCache.enabled()) {
			this.prefixCache.touch(sequence, cached);
			this.metrics.prefixCacheQueried(sequence.totalTokens(), cached);
		}
	}

	private int chunk(int pending, int budget) {
		return this.properties.chunkedPrefill() ? Math.min(pending, budget) : pending;
	}

	/**
	 * Grows the sequence's blocks to cover its tokens, preempting from the back of the
	 * running list.
	 */
	private boolean reserveBlocks(SimSequence sequence) {
		int needed = this.pool.blocksFor(sequence.totalTokens()) - sequence.blocks;
		while (!this.pool.tryTake(needed)) {
			SimSequence victim = this.running.remove(this.running.size() - 1);
			preempt(victim);
			if (victim == sequence) {
				return false;
			}
		}
		sequence.blocks += needed;
		return true;
	}

	private void preempt(SimSequence victim) {
		release(victim);
		victim.computed = 0;
		victim.state = SimSequence.State.WAITING;
		victim.preemptedSinceLastToken = true;
		victim.preemptions++;
		this.waiting.addFirst(victim);
		this.preemptions++;
		this.preemptedInStep = true;
	}

	private void applyEngineStalls(StepPlan plan) {
		for (StepPlan.Scheduled scheduled : plan.scheduled()) {
			SimSequence sequence = scheduled.sequence();
			// At the step that produces token K, or the first after it when accepted
			// drafts (speculative decoding) carried the output past K.
			int next = sequence.engineStallsApplied;
			if (next < sequence.engineStallTokens.length && sequence.generated >= sequence.engineStallTokens[next]
					&& scheduled.producesToken()) {
				sequence.engineStallsApplied++;
				plan.addInjectedStall(sequence.engineStallNanos[next]);
			}
		}
	}

	/**
	 * Takes the sequence out of the engine at once, wherever it is, and frees its blocks.
	 */
	void remove(SimSequence sequence, SimSequence.State outcome) {
		if (sequence.state == SimSequence.State.RUNNING) {
			this.running.remove(sequence);
			release(sequence);
		}
		else if (sequence.state == SimSequence.State.WAITING) {
			this.waiting.remove(sequence);
		}
		sequence.state = outcome;
	}

	private void release(SimSequence sequence) {
		this.pool.release(sequence.blocks);
		sequence.blocks = 0;
	}

	List<SimSequence> removeAll() {
		List<SimSequence> all = new ArrayList<>(this.running);
		all.addAll(this.waiting);
		all.forEach((sequence) -> remove(sequence, SimSequence.State.ABORTED));
		return all;
	}

	void forEachActive(Consumer<SimSequence> action) {
		this.running.forEach(action);
		this.waiting.forEach(action);
	}

	int runningCount() {
		return this.running.size();
	}

	int waitingCount() {
		return this.waiting.size();
	}

	long preemptions() {
		return this.preemptions;
	}

	KvBlockPool pool() {
		return this.pool;
	}

	PrefixCache prefixCache() {
		return this.prefixCache;
	}

}
