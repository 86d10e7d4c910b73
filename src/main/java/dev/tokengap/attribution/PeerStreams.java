package dev.tokengap.attribution;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import dev.tokengap.timing.StreamTimer;

/**
 * Every live stream through this tokengap, so that a spike on one can be compared with
 * what the others received meanwhile: vLLM's gauges are engine-wide, but tokengap sees
 * every stream's events at once. Written once when a stream starts and once when it ends
 * (on the streams' event loops); read only for spikes, on the attributor's threads, and
 * then only through what each stream's timer publishes to other threads.
 */
final class PeerStreams {

	/** One live stream and what its recompute would cost the engine. */
	record Peer(StreamTimer timer, String requestId, long promptTokens) {

	}

	/**
	 * Bins the window is cut into to find its longest stretch without another stream's
	 * event.
	 */
	static final int BINS = 64;

	/**
	 * Streams that ended recently: those that ended inside a long gap still say what the
	 * engine did.
	 */
	static final int RECENTLY_ENDED = 512;

	private final Map<StreamTimer, Peer> live = new ConcurrentHashMap<>();

	private final Peer[] ended = new Peer[RECENTLY_ENDED];

	private int endedNext;

	void started(StreamTimer timer, String requestId, long promptTokens) {
		this.live.put(timer, new Peer(timer, requestId, promptTokens));
	}

	void ended(StreamTimer timer) {
		Peer peer = this.live.remove(timer);
		if (peer != null) {
			synchronized (this.ended) {
				this.ended[this.endedNext] = peer;
				this.endedNext = (this.endedNext + 1) % RECENTLY_ENDED;
			}
		}
	}

	/**
	 * When any stream, live or recently ended, last received a content event from the
	 * engine.
	 * @return the arrival, or -1 when none has had one
	 */
	long lastContentNanos() {
		long last = -1;
		for (Peer peer : this.live.values()) {
			last = Math.max(last, peer.timer().lastArrivalNanos());
		}
		synchronized (this.ended) {
			for (Peer peer : this.ended) {
				if (peer != null) {
					last = Math.max(last, peer.timer().lastArrivalNanos());
				}
			}
		}
		return last;
	}

	/**
	 * What the other streams received during one stream's gap, taken as the gap closes:
	 * the live ones, and those that ended inside it.
	 * @param self the stream whose gap it is
	 * @param fromNanos upstream arrival of the gap's first event
	 * @param toNanos upstream arrival of the event that ended it
	 * @return the view
	 */
	PeerView during(StreamTimer self, long fromNanos, long toNanos) {
		Tally tally = new Tally(self, fromNanos, toNanos);
		for (Peer peer : this.live.values()) {
			tally.add(peer, true);
		}
		synchronized (this.ended) {
			for (Peer peer : this.ended) {
				if (peer != null && peer.timer().lastArrivalNanos() > fromNanos) {
					tally.add(peer, false);
				}
			}
		}
		return new PeerView(tally.decoding, tally.fed, tally.waiting, self,
				longestQuiet(tally.covered) * (toNanos - fromNanos) / BINS);
	}

	/** The longest run of bins without an event, in bins. */
	private static long longestQuiet(long covered) {
		long longest = 0;
		long run = 0;
		for (int bin = 0; bin < BINS; bin++) {
			run = ((covered & (1L << bin)) != 0) ? 0 : run + 1;
			longest = Math.max(longest, run);
		}
		return longest;
	}

	/** The other streams' events during one gap, stream by stream. */
	private static final class Tally {

		private final StreamTimer self;

		private final long from;

		private final long to;

		private final long window;

		private final long[] arrivals = new long[StreamTimer.RECENT_ARRIVALS];

		private final List<PeerView.Waiting> waiting = new ArrayList<>(0);

		/** Bit i: some other stream received content in the window's i-th 64th. */
		private long covered;

		private int decoding;

		private int fed;

		Tally(StreamTimer self, long from, long to) {
			this.self = self;
			this.from = from;
			this.to = to;
			this.window = Math.max(1, to - from);
		}

		void add(Peer peer, boolean live) {
			StreamTimer timer = peer.timer();
			long first = timer.firstArrivalNanos();
			if (timer == this.self || first < 0) {
				return;
			}
			int n = timer.recentArrivals(this.arrivals);
			// Read after the copy, from the count published with it: never fewer events
			// than the copy holds.
			int events = timer.publishedContentEvents();
			boolean wrapped = timer.recentArrivalsWrapped();
			cover(n, wrapped);
			if (first >= this.from) {
				// Not decoding when the gap began (its prefill finished inside it): its
				// events still show the engine stepping.
				return;
			}
			this.decoding++;
			if (receivedThroughout(this.arrivals, n, wrapped, this.from, live ? this.to : lastArrival(n),
					this.window)) {
				this.fed++;
				return;
			}
			int start = latestAtOrBefore(this.arrivals, n, this.from);
			if (live && start >= 0 && this.arrivals[start] < this.from - this.window / 2) {
				// Silent since well before this gap began: preempted, perhaps, and
				// waiting to be recomputed. If it has already resumed, when.
				long resumed = (start > 0) ? this.arrivals[start - 1] : -1;
				this.waiting.add(new PeerView.Waiting(peer, this.arrivals[start], resumed, events - start));
			}
		}

		/**
		 * An ended stream's last arrival, up to the gap's end: one that ended after the
		 * gap closed (the scan runs a little later) is judged as it was then.
		 */
		private long lastArrival(int n) {
			return (n > 0) ? Math.min(this.arrivals[0], this.to) : this.to;
		}

		/**
		 * Marks the bins the stream's events fall in; a ring that wrapped inside the
		 * window covers its front.
		 */
		private void cover(int n, boolean wrapped) {
			long oldestInside = -1;
			for (int i = 0; i < n; i++) {
				long arrival = this.arrivals[i];
				if (arrival <= this.from) {
					oldestInside = -1;
					break;
				}
				if (arrival < this.to) {
					this.covered |= 1L << bin(arrival);
				}
				oldestInside = arrival;
			}
			if (wrapped && n == this.arrivals.length && oldestInside >= 0) {
				int last = bin(Math.min(oldestInside, this.to - 1));
				this.covered |= (last == BINS - 1) ? -1L : (1L << (last + 1)) - 1;
			}
		}

		private int bin(long arrival) {
			return (int) Math.min(BINS - 1, (arrival - this.from) * BINS / this.window);
		}

	}

	/**
	 * Whether a stream's events covered the window: no stretch of it without one is as
	 * long as half the window. A ring that wrapped inside the window held more events
	 * than it keeps.
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
