package dev.tokengap.deploy;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A bounded streaming load through tokengap: a few concurrent streams with long-ish
 * prompts (KV pressure on a small pool), every fourth asking the simulated engine to
 * stall a step, and in every cycle of twelve one stream of each other shape and outcome
 * the contract knows (version 2), so that every dashboard and alert expression has data:
 * a {@code /v1/responses} and a {@code /v1/messages} stream, a chat stream that asks for
 * its usage (the engine's per-request metrics come with it), an in-band engine error
 * after token 3 ({@code engine_error}), and two refused requests ({@code invalid}): an
 * unknown model (404) and one whose {@code max_tokens} exceeds the model's length (400,
 * still labelled with the served model). It stops by itself after {@code maxDuration}, or
 * when closed.
 */
final class LoadDriver implements AutoCloseable {

	/** About 150 prompt tokens at the simulator's 4 characters per token. */
	private static final String PROMPT = "Explain how continuous batching and paged attention interact. ".repeat(10)
		.strip();

	private static final String CHAT = "/v1/chat/completions";

	private final ExecutorService workers;

	private final AtomicBoolean running = new AtomicBoolean(true);

	private final AtomicInteger completed = new AtomicInteger();

	private final AtomicInteger faults = new AtomicInteger();

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
				send(baseUrl, (worker + n) % 12, maxTokens);
			}
			catch (Exception ex) {
				this.failed.incrementAndGet();
			}
		}
	}

	/** The request of one slot of the cycle of twelve. */
	private void send(String baseUrl, int slot, int maxTokens) throws IOException {
		switch (slot) {
			case 0, 4, 8 -> completed(SseRequests.chat(baseUrl, maxTokens, PROMPT, "X-Sim-Engine-Stall", "12:600"));
			case 1 -> completed(SseRequests.responses(baseUrl, maxTokens, PROMPT));
			case 2 -> completed(SseRequests.messages(baseUrl, maxTokens, PROMPT));
			case 3 -> completed(SseRequests.chatWithUsage(baseUrl, maxTokens, PROMPT));
			case 5 -> inBandError(SseRequests.chat(baseUrl, maxTokens, PROMPT, "X-Sim-Error-After", "3"));
			case 9 ->
				refused(SseRequests.status(baseUrl, CHAT, SseRequests.chatBody("no-such-model", maxTokens, PROMPT)));
			case 10 -> refused(
					SseRequests.status(baseUrl, CHAT, SseRequests.chatBody(TokengapImage.MODEL, 1_000_000, PROMPT)));
			default -> completed(SseRequests.chat(baseUrl, maxTokens, PROMPT));
		}
	}

	private void completed(List<String> lines) throws IOException {
		if (lines.isEmpty()) {
			throw new IOException("an empty stream");
		}
		this.completed.incrementAndGet();
	}

	private void inBandError(List<String> lines) throws IOException {
		if (lines.stream().noneMatch((line) -> line.startsWith("data:") && line.contains("\"error\""))) {
			throw new IOException("X-Sim-Error-After: the stream carried no error event");
		}
		this.faults.incrementAndGet();
	}

	private void refused(int status) throws IOException {
		if (status < 400 || status >= 500 || status == 429) {
			throw new IOException("expected a 4xx other than 429, got " + status);
		}
		this.faults.incrementAndGet();
	}

	int completed() {
		return this.completed.get();
	}

	/** Requests made to fail (engine error, refused) that failed as asked. */
	int faults() {
		return this.faults.get();
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
