package dev.tokengap.attribution;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReferenceArray;

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

	/**
	 * The live streams, each in a slot of its own, so that a scan reads them as one
	 * array: a scan runs for every burst of spikes and reads every live stream, and a
	 * hash map's nodes cost it a cache miss each. Slots are taken and freed under
	 * {@link #lock}; a scan takes no lock and reads whichever array is current.
	 */
	private volatile AtomicReferenceArray<Peer> live = new AtomicReferenceArray<>(64);

	/**
	 * Slots in use or freed below this; a scan reads no further. Written under the lock.
	 */
	private volatile int liveEnd;

	private final Object lock = new Object();

	/** Each live stream's slot; under the lock. */
	private final Map<StreamTimer, Integer> slots = new IdentityHashMap<>();

	/** Freed slots, reused before {@link #liveEnd} grows; under the lock. */
	private int[] freeSlots = new int[16];

	private int freeCount;

	private final Peer[] ended = new Peer[RECENTLY_ENDED];

	private int endedNext;

	void started(StreamTimer timer, String requestId, long promptTokens) {
		Peer peer = new Peer(timer, requestId, promptTokens);
		synchronized (this.lock) {
			Integer taken = this.slots.get(timer);
			int slot;
			if (taken != null) {
				slot = taken;
			}
			else if (this.freeCount > 0) {
				slot = this.freeSlots[--this.freeCount];
			}
			else {
				slot = this.liveEnd;
				AtomicReferenceArray<Peer> current = this.live;
				if (slot == current.length()) {
					AtomicReferenceArray<Peer> grown = new AtomicReferenceArray<>(slot * 2);
					for (int i = 0; i < slot; i++) {
						grown.set(i, current.get(i));
					}
					this.live = grown;
				}
				this.liveEnd = slot + 1;
			}
			this.slots.put(timer, slot);
			this.live.set(slot, peer);
		}
	}

	void ended(StreamTimer timer) {
		Peer peer = null;
		synchronized (this.lock) {
			Integer slot = this.slots.remove(timer);
			if (slot != null) {
				peer = this.live.getAndSet(slot, null);
				if (this.freeCount == this.freeSlots.length) {
					this.freeSlots = Arrays.copyOf(this.freeSlots, this.freeCount * 2);
				}
				this.freeSlots[this.freeCount++] = slot;
			}
		}
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
		AtomicReferenceArray<Peer> live = this.live;
		for (int i = 0, end = Math.min(this.liveEnd, live.length()); i < end; i++) {
			Peer peer = live.get(i);
			if (peer != null) {
				last = Math.max(last, peer.timer().lastArrivalNanos());
			}
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

	/** One stream's gap, as {@link #during(List)} is asked about it. */
	record Gap(StreamTimer self, long fromNanos, long toNanos) {

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
		return during(List.of(new Gap(self, fromNanos, toNanos))).get(0);
	}

	/**
	 * What the other streams received during each of several gaps, in one pass over the
	 * streams: each stream's arrivals are read once for all the gaps, so a burst of
	 * spikes costs one pass, not one per spike. Each view is what
	 * {@link #during(StreamTimer, long, long)} gives for its gap.
	 * @param gaps the gaps, any streams, any order
	 * @return their views, in the same order
	 */
	List<PeerView> during(List<Gap> gaps) {
		Tally[] tallies = new Tally[gaps.size()];
		long earliest = Long.MAX_VALUE;
		for (int i = 0; i < tallies.length; i++) {
			Gap gap = gaps.get(i);
			tallies[i] = new Tally(gap.self(), gap.fromNanos(), gap.toNanos());
			earliest = Math.min(earliest, gap.fromNanos());
		}
		Arrivals arrivals = new Arrivals(earliest);
		AtomicReferenceArray<Peer> live = this.live;
		for (int i = 0, end = Math.min(this.liveEnd, live.length()); i < end; i++) {
			Peer peer = live.get(i);
			if (peer != null && arrivals.read(peer.timer())) {
				for (Tally tally : tallies) {
					tally.add(peer, true, arrivals);
				}
			}
		}
		synchronized (this.ended) {
			for (Peer peer : this.ended) {
				if (peer == null) {
					continue;
				}
				long last = peer.timer().lastArrivalNanos();
				if (last > earliest && arrivals.read(peer.timer())) {
					for (Tally tally : tallies) {
						if (last > tally.from) {
							tally.add(peer, false, arrivals);
						}
					}
				}
			}
		}
		List<PeerView> views = new ArrayList<>(tallies.length);
		for (Tally tally : tallies) {
			views.add(new PeerView(tally.decoding, tally.fed, tally.waiting, tally.self,
					longestQuiet(tally.covered) * (tally.to - tally.from) / BINS));
		}
		return views;
	}

	/**
	 * One stream's recent arrivals, newest first, read once for every gap of a pass: down
	 * to the first at or before the earliest gap's start, which is as far as any gap
	 * reads.
	 */
	static final class Arrivals {

		private final long through;

		final long[] times = new long[StreamTimer.RECENT_ARRIVALS];

		int count;

		int events;

		boolean wrapped;

		long first;

		Arrivals(long through) {
			this.through = through;
		}

		/**
		 * Reads one stream's.
		 * @return false when it has had no content event
		 */
		boolean read(StreamTimer timer) {
			this.first = timer.firstArrivalNanos();
			if (this.first < 0) {
				return false;
			}
			this.count = timer.recentArrivals(this.times, this.through);
			// Read after the copy, from the count published with it: never fewer events
			// than the copy holds.
			this.events = timer.publishedContentEvents();
			this.wrapped = timer.recentArrivalsWrapped();
			return true;
		}

	}

	/** The longest run of bins without an event, in bins. */
	static long longestQuiet(long covered) {
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

		/** {@code 1 / window}, for {@link #bin}. */
		private final double perWindow;

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
			this.perWindow = 1.0 / this.window;
		}

		/**
		 * Counts one other stream, from its arrivals (newest first, down to at least the
		 * first at or before this gap's start), read once for all it says of this gap:
		 * the bins its events fall in, whether it was decoding when the gap began,
		 * whether its events covered the gap, and when it last received before the gap.
		 */
		void add(Peer peer, boolean live, Arrivals read) {
			if (peer.timer() == this.self) {
				return;
			}
			long[] arrivals = read.times;
			int n = read.count;
			// An ended stream is judged up to its last arrival, or up to the gap's end
			// if it ended after the gap closed (the scan runs a little later).
			long end = (live || n == 0) ? this.to : Math.min(arrivals[0], this.to);
			long covered = 0;
			long later = end;
			long longest = 0;
			int inside = 0;
			int start = -1;
			for (int i = 0; i < n; i++) {
				long arrival = arrivals[i];
				if (arrival <= this.from) {
					start = i;
					break;
				}
				if (arrival < this.to) {
					covered |= 1L << bin(arrival);
				}
				if (arrival <= end) {
					inside++;
					longest = Math.max(longest, later - arrival);
					later = arrival;
				}
			}
			// Every kept event is inside the window: the ring wrapped, so more came
			// before its oldest one, and they cover the window's front.
			boolean wrappedInside = start < 0 && read.wrapped && n == arrivals.length;
			if (wrappedInside) {
				int last = bin(Math.min(arrivals[n - 1], this.to - 1));
				covered |= (last == BINS - 1) ? -1L : (1L << (last + 1)) - 1;
			}
			this.covered |= covered;
			if (read.first >= this.from) {
				// Not decoding when the gap began (its prefill finished inside it): its
				// events still show the engine stepping.
				return;
			}
			this.decoding++;
			// Whether its events covered the window: no stretch of it without one is as
			// long as half the window.
			boolean throughout;
			if (start >= 0) {
				longest = Math.max(longest, later - this.from);
				throughout = inside > 0 && longest < this.window / 2;
			}
			else {
				throughout = wrappedInside && longest < this.window / 2;
			}
			if (throughout) {
				this.fed++;
				return;
			}
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
		 * The bin of an arrival after the window's start, {@code (arrival - from) * BINS
		 * / window}: the quotient is estimated with a multiplication and corrected by one
		 * where the estimate missed it, since a pass would otherwise make a division for
		 * each event of each stream in the window of each spike.
		 */
		private int bin(long arrival) {
			long scaled = (arrival - this.from) * BINS;
			long quotient = (long) (scaled * this.perWindow);
			if (quotient * this.window > scaled) {
				quotient--;
			}
			else if ((quotient + 1) * this.window <= scaled) {
				quotient++;
			}
			return (int) Math.min(BINS - 1, quotient);
		}

	}

}
