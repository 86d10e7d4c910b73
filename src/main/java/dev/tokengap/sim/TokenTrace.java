package dev.tokengap.sim;

import java.util.ArrayList;
import java.util.List;

/**
 * The last N trace entries in a ring. The engine thread appends, any thread reads a copy;
 * the lock is held for one array store or one copy.
 */
final class TokenTrace {

	private final TraceEntry[] ring;

	private long appended;

	TokenTrace(int capacity) {
		this.ring = new TraceEntry[capacity];
	}

	synchronized void add(TraceEntry entry) {
		this.ring[(int) (this.appended % this.ring.length)] = entry;
		this.appended++;
	}

	/**
	 * Entries oldest first, optionally only those of one request ({@code null} for all).
	 */
	synchronized List<TraceEntry> entries(String requestId) {
		int size = (int) Math.min(this.appended, this.ring.length);
		List<TraceEntry> copy = new ArrayList<>(requestId != null ? 64 : size);
		for (long i = this.appended - size; i < this.appended; i++) {
			TraceEntry entry = this.ring[(int) (i % this.ring.length)];
			if (requestId == null || requestId.equals(entry.requestId())) {
				copy.add(entry);
			}
		}
		return copy;
	}

}
