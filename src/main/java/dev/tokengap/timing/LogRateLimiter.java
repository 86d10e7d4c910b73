package dev.tokengap.timing;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Lets about a fixed number of log lines through per second, from any thread, and counts
 * the rest, so that a burst (a thousand streams stalling together, every request answered
 * 502 while the engine is down) costs a few lines instead of thousands: building and
 * writing a line costs far more than what it reports. The first line let through after a
 * skip can say how many were skipped; what the lines report is counted in the metrics
 * regardless.
 */
public final class LogRateLimiter {

	private static final long SECOND = 1_000_000_000L;

	private final int perSecond;

	private final NanoClock clock;

	private final AtomicLong windowStart;

	private final AtomicInteger used = new AtomicInteger();

	private final AtomicLong skipped = new AtomicLong();

	/**
	 * Creates a limiter.
	 * @param perSecond lines let through per second; 0 lets none through
	 * @param clock the clock that delimits the seconds
	 */
	public LogRateLimiter(int perSecond, NanoClock clock) {
		this.perSecond = perSecond;
		this.clock = clock;
		this.windowStart = new AtomicLong(clock.nanoTime());
	}

	/**
	 * Asks to log one line now.
	 * @return -1 when the line must be skipped; otherwise how many lines were skipped
	 * before it
	 */
	public long tryAcquire() {
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

	/**
	 * @return the lines let through per second
	 */
	public int perSecond() {
		return this.perSecond;
	}

}
