package dev.tokengap.sim;

import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import reactor.core.publisher.Sinks;

/**
 * A vLLM engine in real time: one thread runs steps of continuous batching, each lasting as long as
 * the cost model says, and hands every output token to its request's HTTP stream. It keeps the
 * ground truth of every token in a trace and vLLM's own statistics for {@code /metrics}.
 *
 * <pre>
 * HTTP threads --submit/abort--> inbox --> engine thread: schedule -> park to step end -> emit
 *                                                             |                            |
 *                                          aborts applied while parked       per-request sink (never blocks)
 * </pre>
 */
public final class SimEngine {

	private final SimulatorProperties properties;

	private final StepScheduler scheduler;

	private final TokenTrace trace;

	private final TokenVocabulary vocabulary;

	private final VllmMetrics metrics = new VllmMetrics();

	private final Queue<Runnable> inbox = new ConcurrentLinkedQueue<>();

	private final Thread thread;

	private volatile boolean closed;

	// Written by the engine thread only, read by scrapes and tests.
	private volatile int running;

	private volatile int waiting;

	private volatile double kvCacheUsage;

	private volatile long preemptions;

	private volatile long steps;

	SimEngine(SimulatorProperties properties) {
		properties.requireUsable();
		this.properties = properties;
		this.scheduler = new StepScheduler(properties);
		this.trace = new TokenTrace(properties.traceCapacity());
		this.vocabulary = new TokenVocabulary(properties.seed());
		this.thread = new Thread(this::run, "tokengap-sim-engine");
		this.thread.setDaemon(true);
		this.thread.start();
	}

	/** @return sequences in the running set */
	public int running() {
		return this.running;
	}

	/** @return sequences in the waiting queue, preempted ones included */
	public int waiting() {
		return this.waiting;
	}

	/** @return preemptions since start */
	public long preemptions() {
		return this.preemptions;
	}

	/** @return fraction of KV blocks in use, 0..1 */
	public double kvCacheUsage() {
		return this.kvCacheUsage;
	}

	/** @return steps completed since start */
	public long steps() {
		return this.steps;
	}

	/** @return the kept trace, oldest entry first */
	public List<TraceEntry> trace() {
		return this.trace.entries(null);
	}

	/**
	 * @param requestId a request's {@code X-Request-Id} or response id
	 * @return that request's kept trace entries, by token index
	 */
	public List<TraceEntry> trace(String requestId) {
		return this.trace.entries(requestId);
	}

	public SimulatorProperties properties() {
		return this.properties;
	}

	TokenVocabulary vocabulary() {
		return this.vocabulary;
	}

	VllmMetrics metrics() {
		return this.metrics;
	}

	VllmMetricsWriter.EngineGauges gauges() {
		return new VllmMetricsWriter.EngineGauges(this.running, this.waiting, this.kvCacheUsage, this.preemptions);
	}

	void submit(SimSequence sequence) {
		command(() -> this.scheduler.enqueue(sequence));
		if (this.closed) {
			sequence.sink().tryEmitError(new IllegalStateException("Simulator engine is closed"));
		}
	}

	/** Aborts as vLLM does when the client goes away: out of the running set, blocks freed. */
	void abort(SimSequence sequence) {
		command(() -> abortNow(sequence));
	}

	private void command(Runnable command) {
		this.inbox.add(command);
		LockSupport.unpark(this.thread);
	}

	void close() {
		this.closed = true;
		LockSupport.unpark(this.thread);
		try {
			this.thread.join(TimeUnit.SECONDS.toMillis(5));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private void run() {
		while (!this.closed) {
			drainInbox();
			StepPlan plan = this.scheduler.schedule(this.steps + 1);
			publish();
			if (plan.isEmpty()) {
				LockSupport.park(this);
			}
			else {
				runStep(plan);
			}
		}
		drainInbox();
		this.scheduler.removeAll()
			.forEach((sequence) -> sequence.sink().tryEmitError(new IllegalStateException("Simulator closed")));
		publish();
	}

	private void runStep(StepPlan plan) {
		long start = System.nanoTime();
		long startEpochMillis = System.currentTimeMillis();
		awaitDeadline(start + plan.costNanos(this.properties));
		long end = System.nanoTime();
		long endEpochMillis = startEpochMillis + TimeUnit.NANOSECONDS.toMillis(end - start);
		new StepCompletion(plan, start, end, endEpochMillis).run();
		this.steps = plan.stepId;
		publish();
	}

	/** Parks to the step's end, applying aborts and submissions as they come so a cancel is felt at once. */
	private void awaitDeadline(long deadline) {
		long remaining;
		while ((remaining = deadline - System.nanoTime()) > 0 && !this.closed) {
			LockSupport.parkNanos(this, remaining);
			if (!this.inbox.isEmpty()) {
				drainInbox();
				publish();
			}
		}
	}

	private void drainInbox() {
		Runnable command;
		while ((command = this.inbox.poll()) != null) {
			command.run();
		}
	}

	private void abortNow(SimSequence sequence) {
		if (sequence.active()) {
			this.scheduler.remove(sequence, SimSequence.State.ABORTED);
			this.metrics.aborted();
		}
	}

	private void publish() {
		this.running = this.scheduler.runningCount();
		this.waiting = this.scheduler.waitingCount();
		this.kvCacheUsage = this.scheduler.pool().usage();
		this.preemptions = this.scheduler.preemptions();
	}

	/** The end of one step: every sequence whose pending tokens are all computed gets its next token. */
	private final class StepCompletion {

		private final StepPlan plan;

		private final long start;

		private final long end;

		private final long endEpochMillis;

		StepCompletion(StepPlan plan, long start, long end, long endEpochMillis) {
			this.plan = plan;
			this.start = start;
			this.end = end;
			this.endEpochMillis = endEpochMillis;
		}

		void run() {
			SimEngine.this.metrics.stepCompleted(this.plan.totalTokens());
			if (this.plan.injectedStall()) {
				SimEngine.this.scheduler.forEachActive((sequence) -> sequence.stalledSinceLastToken = true);
			}
			for (StepPlan.Scheduled scheduled : this.plan.scheduled()) {
				SimSequence sequence = scheduled.sequence();
				// Aborted while the step ran: its work is thrown away.
				if (sequence.state != SimSequence.State.RUNNING) {
					continue;
				}
				boolean producesToken = scheduled.producesToken();
				sequence.computed += scheduled.tokens();
				if (producesToken) {
					emit(scheduled);
				}
			}
		}

		private void emit(StepPlan.Scheduled scheduled) {
			SimSequence sequence = scheduled.sequence();
			int index = sequence.generated;
			record(scheduled, index);
			sequence.generated++;
			boolean last = sequence.generated >= sequence.maxTokens;
			TokenOutput output = new TokenOutput(index, sequence.nextText(), last ? "length" : null,
					sequence.promptTokens, sequence.generated);
			if (last) {
				SimEngine.this.scheduler.remove(sequence, SimSequence.State.FINISHED);
				SimEngine.this.metrics.finished(sequence);
			}
			Sinks.EmitResult result = sequence.sink().tryEmitNext(output);
			if (last) {
				sequence.sink().tryEmitComplete();
			}
			else if (result.isFailure()) {
				abortNow(sequence);
			}
		}

		private void record(StepPlan.Scheduled scheduled, int index) {
			SimSequence sequence = scheduled.sequence();
			long since = this.end - ((index == 0) ? sequence.arrivalNanos : sequence.lastTokenNanos);
			int otherPrefill = this.plan.prefillTokens() - (scheduled.prefill() ? scheduled.tokens() : 0);
			SimEngine.this.trace.add(new TraceEntry(sequence.traceId, index, this.plan.stepId, this.start, this.end,
					this.endEpochMillis, this.end - this.start, this.plan.batchSize(), otherPrefill,
					sequence.preemptedSinceLastToken, sequence.stalledSinceLastToken, since));
			if (index == 0) {
				sequence.firstTokenNanos = this.end;
			}
			else {
				sequence.addInterTokenLatency(VllmMetrics.seconds(since));
			}
			sequence.lastTokenNanos = this.end;
			sequence.preemptedSinceLastToken = false;
			sequence.stalledSinceLastToken = false;
			SimEngine.this.metrics.tokenProduced(sequence, index == 0);
		}

	}

}
