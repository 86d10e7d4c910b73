package dev.tokengap.bench;

import java.io.PrintStream;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;

import reactor.core.Disposable;
import reactor.core.publisher.Flux;

/**
 * The live progress line on stderr: requests done and failed, elapsed time and the rate
 * so far, rewritten in place once a second.
 */
final class Progress implements AutoCloseable {

	private final PrintStream err;

	private final String name;

	private final int total;

	private final long startNanos = System.nanoTime();

	private final AtomicInteger done = new AtomicInteger();

	private final AtomicInteger failed = new AtomicInteger();

	private final Disposable ticker;

	Progress(PrintStream err, int total, boolean live) {
		this(err, "bench", total, live);
	}

	/**
	 * @param name what the line is about ({@code bench}, {@code warm-up})
	 */
	Progress(PrintStream err, String name, int total, boolean live) {
		this.err = err;
		this.name = name;
		this.total = total;
		this.ticker = live ? Flux.interval(Duration.ofSeconds(1)).subscribe((tick) -> print("\r")) : null;
	}

	void finished(StreamResult result) {
		this.done.incrementAndGet();
		if (!result.ok()) {
			this.failed.incrementAndGet();
		}
	}

	private synchronized void print(String prefix) {
		double elapsed = (System.nanoTime() - this.startNanos) / 1e9;
		int n = this.done.get();
		this.err.printf(Locale.ROOT, "%s%s: %d/%d done, %d failed, %.1f s, %.2f req/s ", prefix, this.name, n,
				this.total, this.failed.get(), elapsed, (elapsed > 0) ? n / elapsed : 0.0);
		this.err.flush();
	}

	@Override
	public void close() {
		if (this.ticker != null) {
			this.ticker.dispose();
			print("\r");
			this.err.println();
		}
	}

}
