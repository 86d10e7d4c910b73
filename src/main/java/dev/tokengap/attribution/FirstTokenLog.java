package dev.tokengap.attribution;

/**
 * When each stream's first token arrived from the engine (its prefill finished) and how
 * big its prompt was: a fixed-size ring, written once per stream, read once per spike.
 */
final class FirstTokenLog {

	private final long[] arrivals;

	private final long[] promptTokens;

	private int next;

	private int size;

	FirstTokenLog(int capacity) {
		this.arrivals = new long[capacity];
		this.promptTokens = new long[capacity];
	}

	synchronized void record(long arrivalNanos, long tokens) {
		this.arrivals[this.next] = arrivalNanos;
		this.promptTokens[this.next] = tokens;
		this.next = (this.next + 1) % this.arrivals.length;
		this.size = Math.min(this.size + 1, this.arrivals.length);
	}

	/**
	 * First tokens that arrived in {@code (fromNanos, toNanos]}.
	 * @return {count, prompt tokens}
	 */
	synchronized long[] between(long fromNanos, long toNanos) {
		long count = 0;
		long tokens = 0;
		for (int i = 0; i < this.size; i++) {
			long arrival = this.arrivals[i];
			if (arrival > fromNanos && arrival <= toNanos) {
				count++;
				tokens += this.promptTokens[i];
			}
		}
		return new long[] { count, tokens };
	}

}
