package dev.tokengap.proxy;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import dev.tokengap.timing.NanoClock;

/**
 * Lets at most a fixed number of error-answer log lines through per second, from any event loop:
 * while the engine is down every request is answered 502, and one line each was 8,000 lines in
 * two minutes of a soak. The answers are all counted in {@code tokengap_requests_total{status}};
 * the first line let through after a skip says how many were skipped.
 */
final class ErrorLogLimiter {

	private static final long SECOND = 1_000_000_000L;

	private final int perSecond;

	private final NanoClock clock;

	private final AtomicLong windowStart;

	private final AtomicInteger used = new AtomicInteger();

	private final AtomicLong skipped = new AtomicLong();

	ErrorLogLimiter(int perSecond, NanoClock clock) {
		this.perSecond = perSecond;
		this.clock = clock;
		this.windowStart = new AtomicLong(clock.nanoTime());
	}

	/**
	 * Asks to log one line now.
	 * @return -1 when the line must be skipped; otherwise how many lines were skipped before it
	 */
	long tryAcquire() {
		long now = this.clock.nanoTime();
		long start = this.windowStart.get();
		if (now - start >= SECOND && this.windowStart.compareAndSet(start, now)) {
			this.used.set(0);
		}
		if (this.used.incrementAndGet() > this.perSecond) {
			this.skipped.incrementAndGet();
			return -1;
		}
		return this.skipped.getAndSet(0);
	}

}
