package dev.tokengap.attribution;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import dev.tokengap.timing.StreamTimer;

/**
 * Every live stream through this tokengap, so that a spike on one can be compared with what the
 * others received meanwhile: vLLM's gauges are engine-wide, but tokengap sees every stream's
 * events at once. Written once when a stream starts and once when it ends; read only for spikes.
 */
final class PeerStreams {

	/** One live stream and what its recompute would cost the engine. */
	record Peer(StreamTimer timer, String requestId, long promptTokens) {

	}

	private final Map<StreamTimer, Peer> live = new ConcurrentHashMap<>();

	void started(StreamTimer timer, String requestId, long promptTokens) {
		this.live.put(timer, new Peer(timer, requestId, promptTokens));
	}

	void ended(StreamTimer timer) {
		this.live.remove(timer);
	}

	int size() {
		return this.live.size();
	}

	/**
	 * What the other live streams received during one stream's gap, taken as the gap closes.
	 * @param self the stream whose gap it is
	 * @param fromNanos upstream arrival of the gap's first event
	 * @param toNanos upstream arrival of the event that ended it
	 * @return the view
	 */
	PeerView during(StreamTimer self, long fromNanos, long toNanos) {
		long window = toNanos - fromNanos;
		long[] arrivals = new long[StreamTimer.RECENT_ARRIVALS];
		int decoding = 0;
		int fed = 0;
		List<PeerView.Waiting> waiting = new ArrayList<>(0);
		for (Peer peer : this.live.values()) {
			StreamTimer timer = peer.timer();
			long first = timer.firstArrivalNanos();
			if (timer == self || first < 0 || first >= fromNanos) {
				// Not decoding when the gap began (queued, or its prefill finished inside it).
				continue;
			}
			decoding++;
			int n = timer.recentArrivals(arrivals);
			if (receivedThroughout(arrivals, n, timer.recentArrivalsWrapped(), fromNanos, toNanos, window)) {
				fed++;
				continue;
			}
			int start = latestAtOrBefore(arrivals, n, fromNanos);
			if (start >= 0 && arrivals[start] < fromNanos - window / 2) {
				// Silent since well before this gap began: preempted, perhaps, and waiting to be
				// recomputed. If it has already resumed, when.
				long resumed = (start > 0) ? arrivals[start - 1] : -1;
				waiting.add(new PeerView.Waiting(peer, arrivals[start], resumed, timer.contentEvents() - start));
			}
		}
		return new PeerView(decoding, fed, waiting, self);
	}

	/**
	 * Whether a stream's events covered the window: no stretch of it without one is as long as
	 * half the window. A ring that wrapped inside the window held more events than it keeps.
	 */
	private static boolean receivedThroughout(long[] arrivals, int n, boolean wrapped, long from, long to,
			long window) {
		long later = to;
		long longest = 0;
		int inside = 0;
		for (int i = 0; i < n; i++) {
			long arrival = arrivals[i];
			if (arrival > to) {
				continue;
			}
			if (arrival <= from) {
				longest = Math.max(longest, later - from);
				return inside > 0 && longest < window / 2;
			}
			inside++;
			longest = Math.max(longest, later - arrival);
			later = arrival;
		}
		// Every kept event is inside the window: with a wrapped ring there were more.
		return wrapped && n == arrivals.length && longest < window / 2;
	}

	/** Index of the newest kept arrival at or before {@code at}, or -1. */
	private static int latestAtOrBefore(long[] arrivals, int n, long at) {
		for (int i = 0; i < n; i++) {
			if (arrivals[i] <= at) {
				return i;
			}
		}
		return -1;
	}

}
