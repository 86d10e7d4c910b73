package dev.tokengap.attribution;

import java.util.ArrayList;
import java.util.List;

import dev.tokengap.attribution.PeerStreams.Peer;
import dev.tokengap.timing.StreamTimer;

/**
 * What {@link PeerStreams#during(List)} says of each gap, with each other stream's
 * arrivals read in three loops, one per question (the bins its events fall in, whether
 * they covered the gap, its last arrival before the gap): the plain reading
 * {@code PeerStreamsReadOnceTests} holds the one loop of {@link PeerStreams} to. It is
 * told the live streams in the order they started and the ended ones in the order they
 * ended, which is the order {@link PeerStreams} reads them in while none has ended before
 * another started.
 */
final class PeerStreamsReference {

	private PeerStreamsReference() {
	}

	static List<PeerView> during(List<PeerStreams.Gap> gaps, List<Peer> live, List<Peer> ended) {
		Tally[] tallies = new Tally[gaps.size()];
		long earliest = Long.MAX_VALUE;
		for (int i = 0; i < tallies.length; i++) {
			PeerStreams.Gap gap = gaps.get(i);
			tallies[i] = new Tally(gap.self(), gap.fromNanos(), gap.toNanos());
			earliest = Math.min(earliest, gap.fromNanos());
		}
		PeerStreams.Arrivals arrivals = new PeerStreams.Arrivals(earliest);
		for (Peer peer : live) {
			if (arrivals.read(peer.timer())) {
				for (Tally tally : tallies) {
					tally.add(peer, true, arrivals);
				}
			}
		}
		for (Peer peer : ended) {
			long last = peer.timer().lastArrivalNanos();
			if (last > earliest && arrivals.read(peer.timer())) {
				for (Tally tally : tallies) {
					if (last > tally.from) {
						tally.add(peer, false, arrivals);
					}
				}
			}
		}
		List<PeerView> views = new ArrayList<>(tallies.length);
		for (Tally tally : tallies) {
			views.add(new PeerView(tally.decoding, tally.fed, tally.waiting, tally.self,
					PeerStreams.longestQuiet(tally.covered) * (tally.to - tally.from) / PeerStreams.BINS));
		}
		return views;
	}

	/** The other streams' events during one gap, stream by stream. */
	private static final class Tally {

		private final StreamTimer self;

		private final long from;

		private final long to;

		private final long window;

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

		/**
		 * Counts one other stream, from its arrivals (newest first, down to at least the
		 * first at or before this gap's start).
		 */
		void add(Peer peer, boolean live, PeerStreams.Arrivals read) {
			if (peer.timer() == this.self) {
				return;
			}
			long[] arrivals = read.times;
			int n = read.count;
			cover(arrivals, n, read.wrapped);
			if (read.first >= this.from) {
				// Not decoding when the gap began (its prefill finished inside it): its
				// events still show the engine stepping.
				return;
			}
			this.decoding++;
			if (receivedThroughout(arrivals, n, read.wrapped, this.from, live ? this.to : lastArrival(arrivals, n),
					this.window)) {
				this.fed++;
				return;
			}
			int start = latestAtOrBefore(arrivals, n, this.from);
			if (live && start >= 0 && arrivals[start] < this.from - this.window / 2) {
				// Silent since well before this gap began: preempted, perhaps, and
				// waiting to be recomputed. If it has already resumed, when.
				long resumed = (start > 0) ? arrivals[start - 1] : -1;
				if (resumed >= 0 && Math.abs(resumed - this.to) > PeerView.RESUME_TOLERANCE_NANOS) {
					// Resumed, but not in the step that ended this gap: it cannot have
					// been recomputed there.
					return;
				}
				this.waiting.add(new PeerView.Waiting(peer, arrivals[start], resumed, read.events - start));
			}
		}

		/**
		 * An ended stream's last arrival, up to the gap's end: one that ended after the
		 * gap closed (the scan runs a little later) is judged as it was then.
		 */
		private long lastArrival(long[] arrivals, int n) {
			return (n > 0) ? Math.min(arrivals[0], this.to) : this.to;
		}

		/**
		 * Marks the bins the stream's events fall in; a ring that wrapped inside the
		 * window covers its front.
		 */
		private void cover(long[] arrivals, int n, boolean wrapped) {
			long oldestInside = -1;
			for (int i = 0; i < n; i++) {
				long arrival = arrivals[i];
				if (arrival <= this.from) {
					oldestInside = -1;
					break;
				}
				if (arrival < this.to) {
					this.covered |= 1L << bin(arrival);
				}
				oldestInside = arrival;
			}
			if (wrapped && n == arrivals.length && oldestInside >= 0) {
				int last = bin(Math.min(oldestInside, this.to - 1));
				this.covered |= (last == PeerStreams.BINS - 1) ? -1L : (1L << (last + 1)) - 1;
			}
		}

		private int bin(long arrival) {
			return (int) Math.min(PeerStreams.BINS - 1, (arrival - this.from) * PeerStreams.BINS / this.window);
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
