package dev.tokengap.attribution;

import java.util.List;

import dev.tokengap.timing.StreamTimer;

/**
 * What the other streams through tokengap received during one stream's gap, taken as the
 * gap closed: how many were decoding when it began, how many kept receiving content
 * throughout it (then the gap singled this stream out), and which had been silent since
 * well before it (a preempted sequence waiting for its recompute, whose resumption inside
 * the gap means the engine recomputed it in the step everyone waited for).
 *
 * @param decoding other streams that had received content before the gap began and were
 * still live
 * @param fed those of them whose events covered the gap (no stretch of it without one as
 * long as half of it)
 * @param waiting those silent since well before the gap began that may have resumed at
 * its end: not yet resumed when the gap was read, or resumed within
 * {@link #RESUME_TOLERANCE_NANOS} of its end (one that resumed inside the gap, well
 * before its end, was not recomputed in the step that ended it, and is not kept: at 1,000
 * slow streams half the others look silent in every gap)
 * @param self the stream whose gap it is, or null
 * @param quietNanos the longest stretch of the gap in which no other stream received
 * content (to a 64th of the gap; the whole gap when there were none)
 */
record PeerView(int decoding, int fed, List<Waiting> waiting, StreamTimer self, long quietNanos) {

	/**
	 * How far apart two events of one engine step may reach tokengap, at most: a waiting
	 * stream's resumption further than this from a gap's end was not in the step that
	 * ended it.
	 */
	static final long RESUME_TOLERANCE_NANOS = 50_000_000L;

	/** No other stream was looked at. */
	static final PeerView NONE = new PeerView(0, 0, List.of(), null, Long.MAX_VALUE);

	/**
	 * A stream that had been silent since well before the gap began.
	 *
	 * @param peer the stream
	 * @param silentSinceNanos upstream arrival of its last event before the gap began
	 * @param resumedNanos arrival of its next event, or -1 when it had none yet
	 * @param eventsBefore its content events up to the silence (about its output tokens)
	 */
	record Waiting(PeerStreams.Peer peer, long silentSinceNanos, long resumedNanos, int eventsBefore) {

		/** When it resumed, looked up again now if it had not yet when the gap closed. */
		long resumedNanos(long[] scratch) {
			if (this.resumedNanos >= 0) {
				return this.resumedNanos;
			}
			// Only its events since the silence: the rest of its ring says nothing here.
			int n = this.peer.timer().recentArrivals(scratch, this.silentSinceNanos);
			long next = -1;
			for (int i = 0; i < n && scratch[i] > this.silentSinceNanos; i++) {
				next = scratch[i];
			}
			return next;
		}

		/** Tokens the engine recomputes for it: its prompt and the output it had. */
		long recomputeTokens() {
			return this.peer.promptTokens() + this.eventsBefore;
		}

	}

	/**
	 * The waiting streams that resumed at the gap's end, in the step that ended it.
	 * @param endNanos upstream arrival of the event that ended the gap
	 * @param toleranceNanos how far apart two events of one engine step may arrive
	 * @return {count, their recompute tokens}
	 */
	long[] resumedAtEnd(long endNanos, long toleranceNanos) {
		long count = 0;
		long tokens = 0;
		long[] scratch = null;
		for (Waiting waiting : this.waiting) {
			if (scratch == null) {
				scratch = new long[StreamTimer.RECENT_ARRIVALS];
			}
			long resumed = waiting.resumedNanos(scratch);
			if (resumed >= 0 && Math.abs(resumed - endNanos) <= toleranceNanos) {
				count++;
				tokens += waiting.recomputeTokens();
			}
		}
		return new long[] { count, tokens };
	}

}
