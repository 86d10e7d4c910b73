package dev.tokengap.attribution;

import dev.tokengap.timing.NanoClock;

/**
 * Lets at most a fixed number of spike log lines through per second and counts the rest, so that
 * a burst of spikes (a thousand streams stalling together) costs a few lines instead of thousands:
 * building and writing a log line costs far more than attributing the spike. Every spike is still
 * counted in the histogram and kept for {@code /actuator/spikes}; only its line is skipped. Used by
 * the attribution thread alone, so it is not thread-safe.
 */
final class SpikeLogLimiter {

	private static final long SECOND = 1_000_000_000L;

	private final int perSecond;

	private final NanoClock clock;

	private long windowStart;

	private int used;

	private long suppressed;

	SpikeLogLimiter(int perSecond, NanoClock clock) {
		this.perSecond = perSecond;
		this.clock = clock;
		this.windowStart = clock.nanoTime();
	}

	/**
	 * Asks to log one line now.
	 * @return -1 when the line must be skipped; otherwise how many lines were skipped since the
	 * last one let through (to say so in this line)
	 */
	long tryAcquire() {
		long now = this.clock.nanoTime();
		if (now - this.windowStart >= SECOND) {
			this.windowStart = now;
			this.used = 0;
		}
		if (this.used >= this.perSecond) {
			this.suppressed++;
			return -1;
		}
		this.used++;
		long skipped = this.suppressed;
		this.suppressed = 0;
		return skipped;
	}

}
