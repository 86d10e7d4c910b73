package dev.tokengap.attribution;

/**
 * When each stream's first token arrived from the engine (its prefill finished) and how
 * big its prompt was: a fixed-size ring, written once per stream, read once per spike.
 *
 * <p>
 * The event loops record arrivals timed before they take the lock, so the ring is in
 * arrival order only up to how late a record can come: {@link #lateness} keeps the most
 * any record came behind the latest arrival recorded before it. A read walks back from
 * the newest entry and stops at the first one that arrived at least that much before its
 * window: every older entry arrived no later than the window's start. So it reads the
 * entries of its window and a few more, not the whole ring, under the lock the loops take
 * to record.
 */
final class FirstTokenLog {

	private final long[] arrivals;

	private final long[] promptTokens;

	private int next;

	private int size;

	/** The latest arrival recorded so far. */
	private long latest = Long.MIN_VALUE;

	/** The most a record's arrival came before {@link #latest} when it was recorded. */
	private long lateness;

	FirstTokenLog(int capacity) {
		this.arrivals = new long[capacity];
		this.promptTokens = new long[capacity];
	}

	synchronized void record(long arrivalNanos, long tokens) {
		if (arrivalNanos >= this.latest) {
			this.latest = arrivalNanos;
		}
		else {
			this.lateness = Math.max(this.lateness, this.latest - arrivalNanos);
		}
		this.arrivals[this.next] = arrivalNanos;
		this.promptTokens[this.next] = tokens;
		this.next = (this.next + 1) % this.arrivals.length;
		this.size = Math.min(this.size + 1, this.arrivals.length);
	}

	/**
	 * First tokens that arrived in {@code (fromNanos, toNanos]}.
	 * <p>
	 * An entry recorded before one that arrived at {@code a} arrived no later than the
	 * latest arrival then, which is at most {@code a + lateness}: once {@code a} is at or
	 * before {@code fromNanos - lateness}, no older entry is in the window.
	 * @return {count, prompt tokens}
	 */
	synchronized long[] between(long fromNanos, long toNanos) {
		long count = 0;
		long tokens = 0;
		int capacity = this.arrivals.length;
		for (int i = 0, slot = this.next; i < this.size; i++) {
			slot = (slot == 0) ? capacity - 1 : slot - 1;
			long arrival = this.arrivals[slot];
			if (arrival > fromNanos && arrival <= toNanos) {
				count++;
				tokens += this.promptTokens[slot];
			}
			else if (arrival <= fromNanos && fromNanos - arrival >= this.lateness) {
				break;
			}
		}
		return new long[] { count, tokens };
	}

}
