package dev.tokengap.sim;

import java.util.Random;

import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * A vLLM engine in real time: one thread runs steps of continuous batching, each lasting
 * as long as the cost model says, and hands every output token to its request's HTTP
 * stream. It keeps the ground truth of every token in a trace and vLLM's own statistics
 * for {@code /metrics}.
 *
 * <pre>
 * HTTP threads --submit/abort--> inbox --> engine thread: schedule -> park to step end -> emit
 *                                                             |                            |
 *                                          aborts applied while parked       per-request sink (never blocks)
 * </pre>
 */
public final class SimEngine {

	private static final Log logger = LogFactory.getLog(SimEngine.class);

	private static final long IDLE_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

	private final SimulatorProperties properties;

	private final StepScheduler scheduler;

	private final TokenTrace trace;

	private final TokenVocabulary vocabulary;

	private final VllmMetrics metrics;

	private final StepCompletion completion;

	private final Queue<Runnable> inbox = new ConcurrentLinkedQueue<>();

	// Submissions accepted but not yet in the scheduler's waiting queue: with the
	// published waiting count, what max-num-queued-reqs is checked against.
	private final AtomicInteger submitting = new AtomicInteger();

	private final Thread thread;

	private volatile boolean closed;

	private final LlmRequestSpans spans;

	// Written by the engine thread only, read by scrapes and tests.
	private volatile int running;

	private volatile int waiting;

	private volatile double kvCacheUsage;

	private volatile long preemptions;

	private volatile long steps;

	SimEngine(SimulatorProperties properties) {
		properties.requireUsable();
		this.properties = properties;
		this.metrics = new VllmMetrics(properties.numSpeculativeTokens());
		this.scheduler = new StepScheduler(properties, this.metrics);
		this.trace = new TokenTrace(properties.traceCapacity());
		this.vocabulary = new TokenVocabulary(properties.seed());
		this.completion = new StepCompletion(properties, this.scheduler, this.metrics, this.trace,
				new Random(properties.seed()));
		this.spans = LlmRequestSpans.of(properties.otlpTracesEndpoint());
		this.thread = new Thread(this::run, "tokengap-sim-engine");
		this.thread.setDaemon(true);
		this.thread.start();
	}

	/** Sequences in the running set. */
	public int running() {
		return this.running;
	}

	/** Sequences in the waiting queue, preempted ones included. */
	public int waiting() {
		return this.waiting;
	}

	/** Preemptions since start. */
	public long preemptions() {
		return this.preemptions;
	}

	/** Fraction of KV blocks in use, 0..1. */
	public double kvCacheUsage() {
		return this.kvCacheUsage;
	}

	/** Steps completed since start. */
	public long steps() {
		return this.steps;
	}

	/** The kept trace, oldest entry first. */
	public List<TraceEntry> trace() {
		return this.trace.entries(null);
	}

	/**
	 * The kept trace of one request.
	 * @param requestId the request's {@code X-Request-Id}, else its response id
	 * @return its entries by token index
	 */
	public List<TraceEntry> trace(String requestId) {
		return this.trace.entries(requestId);
	}

	/** The settings the engine runs with. */
	public SimulatorProperties properties() {
		return this.properties;
	}

	LlmRequestSpans spans() {
		return this.spans;
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

	/**
	 * Queues the sequence, or refuses it as vLLM does once {@code --max-num-queued-reqs}
	 * requests wait.
	 * @throws InvalidRequestException (503) when the waiting queue is full
	 */
	void submit(SimSequence sequence) {
		reserveQueueSlot();
		command(() -> {
			this.scheduler.enqueue(sequence);
			// Published before the submission stops counting, so a concurrent check
			// always finds it in one place or the other.
			this.waiting = this.scheduler.waitingCount();
			this.submitting.decrementAndGet();
		});
		if (this.closed) {
			sequence.sink().tryEmitError(new IllegalStateException("Simulator engine is closed"));
		}
	}

	private void reserveQueueSlot() {
		int limit = this.properties.maxNumQueuedReqs();
		int pending;
		do {
			pending = this.submitting.get();
			if (limit > 0 && pending + this.waiting >= limit) {
				throw InvalidRequestException.serviceUnavailable("The engine's waiting queue is full ("
						+ "max_num_queued_reqs=" + limit + "); the request was not queued. Please retry later.");
			}
		}
		while (!this.submitting.compareAndSet(pending, pending + 1));
	}

	/**
	 * Aborts as vLLM does when the client goes away: out of the running set, blocks
	 * freed.
	 */
	void abort(SimSequence sequence) {
		command(() -> this.completion.abort(sequence));
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
		finally {
			this.spans.close();
		}
	}

	/**
	 * Whether the engine thread is alive; like vLLM's {@code /health}, false once the
	 * engine has died.
	 */
	public boolean healthy() {
		return this.thread.isAlive() && !this.closed;
	}

	private void run() {
		try {
			loop();
		}
		catch (RuntimeException | Error ex) {
			logger.error("Simulator engine failed; open streams end with an error", ex);
		}
		finally {
			this.closed = true;
			drainInbox();
			this.scheduler.removeAll()
				.forEach((sequence) -> sequence.sink().tryEmitError(new IllegalStateException("Engine stopped")));
			publish();
		}
	}

	private void loop() {
		while (!this.closed) {
			drainInbox();
			StepPlan plan = this.scheduler.schedule(this.steps + 1);
			publish();
			if (plan.isEmpty()) {
				// Woken by the next command; the timeout only guards against a missed
				// wake-up.
				LockSupport.parkNanos(this, IDLE_PARK_NANOS);
			}
			else {
				runStep(plan);
			}
		}
	}

	private void runStep(StepPlan plan) {
		long start = System.nanoTime();
		long startEpochMillis = System.currentTimeMillis();
		awaitDeadline(start + plan.costNanos(this.properties));
		long end = System.nanoTime();
		long endEpochMillis = startEpochMillis + TimeUnit.NANOSECONDS.toMillis(end - start);
		this.completion.complete(plan, new StepCompletion.Timing(start, end, endEpochMillis));
		this.steps = plan.stepId;
		publish();
	}

	/**
	 * Parks to the step's end, applying aborts and submissions as they come so a cancel
	 * is felt at once.
	 */
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

	private void publish() {
		this.running = this.scheduler.runningCount();
		this.waiting = this.scheduler.waitingCount();
		this.kvCacheUsage = this.scheduler.pool().usage();
		this.preemptions = this.scheduler.preemptions();
	}

}
