package dev.tokengap.deploy;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A bounded streaming load through tokengap: a few concurrent streams with long-ish prompts (KV
 * pressure on a small pool), every fourth asking the simulated engine to stall a step. It stops by
 * itself after {@code maxDuration}, or when closed.
 */
final class LoadDriver implements AutoCloseable {

	/** About 150 prompt tokens at the simulator's 4 characters per token. */
	private static final String PROMPT = "Explain how continuous batching and paged attention interact. ".repeat(10)
		.strip();

	private final ExecutorService workers;

	private final AtomicBoolean running = new AtomicBoolean(true);

	private final AtomicInteger completed = new AtomicInteger();

	private final AtomicInteger failed = new AtomicInteger();

	private final long deadline;

	LoadDriver(String baseUrl, int concurrency, java.time.Duration maxDuration) {
		this.deadline = System.nanoTime() + maxDuration.toNanos();
		this.workers = Executors.newFixedThreadPool(concurrency);
		for (int i = 0; i < concurrency; i++) {
			int worker = i;
			this.workers.execute(() -> run(baseUrl, worker));
		}
	}

	private void run(String baseUrl, int worker) {
		int n = 0;
		while (this.running.get() && System.nanoTime() < this.deadline) {
			n++;
			int maxTokens = 24 + ((worker * 7 + n * 13) % 40);
			try {
				if ((worker + n) % 4 == 0) {
					SseRequests.chat(baseUrl, maxTokens, PROMPT, "X-Sim-Engine-Stall", "12:600");
				}
				else {
					SseRequests.chat(baseUrl, maxTokens, PROMPT);
				}
				this.completed.incrementAndGet();
			}
			catch (Exception ex) {
				this.failed.incrementAndGet();
			}
		}
	}

	int completed() {
		return this.completed.get();
	}

	int failed() {
		return this.failed.get();
	}

	@Override
	public void close() throws InterruptedException {
		this.running.set(false);
		this.workers.shutdown();
		this.workers.awaitTermination(2, TimeUnit.MINUTES);
	}

}
