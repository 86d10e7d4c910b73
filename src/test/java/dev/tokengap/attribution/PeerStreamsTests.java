package dev.tokengap.attribution;

import java.util.Arrays;
import java.util.List;
import java.util.stream.LongStream;

import org.junit.jupiter.api.Test;

import dev.tokengap.timing.StreamTimer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the other streams received during one stream's gap, on made-up arrival times (ms).
 */
class PeerStreamsTests {

	static final long MS = 1_000_000;

	private final PeerStreams peers = new PeerStreams();

	private StreamTimer stream(String id, long promptTokens, long... arrivalsMs) {
		StreamTimer timer = new StreamTimer(0, 1_000 * MS);
		this.peers.started(timer, id, promptTokens);
		for (long ms : arrivalsMs) {
			timer.onContent(0, ms * MS, ms * MS + 1);
		}
		return timer;
	}

	private static long[] every(long fromMs, long toMs, long stepMs) {
		int n = (int) ((toMs - fromMs) / stepMs) + 1;
		long[] times = new long[n];
		for (int i = 0; i < n; i++) {
			times[i] = fromMs + i * stepMs;
		}
		return times;
	}

	@Test
	void aStreamTheOthersKeptReceivingContentBesideWasSingledOut() {
		StreamTimer self = stream("self", 100, 980, 1000);
		stream("a", 100, every(900, 1600, 20));
		stream("b", 100, every(905, 1605, 20));
		PeerView view = this.peers.during(self, 1000 * MS, 1600 * MS);
		assertThat(view.decoding()).isEqualTo(2);
		assertThat(view.fed()).isEqualTo(2);
		assertThat(view.quietNanos()).isLessThan(300 * MS);
		assertThat(view.waiting()).isEmpty();
	}

	@Test
	void aStallEveryStreamSharedIsEngineWideEvenWhenTheirEventsLandJustInsideTheGap() {
		StreamTimer self = stream("self", 100, 980, 1000);
		// Their tokens of the steps before and after
		// the stall arrive a millisecond after ours.
		stream("a", 100, 981, 1001, 1601);
		stream("b", 100, 982, 1002);
		PeerView view = this.peers.during(self, 1000 * MS, 1600 * MS);
		assertThat(view.decoding()).isEqualTo(2);
		assertThat(view.fed()).isZero();
		assertThat(view.quietNanos()).isGreaterThan(500 * MS);
	}

	@Test
	void streamsQueuedOrStartingInsideTheGapAreNotComparedWith() {
		StreamTimer self = stream("self", 100, 980, 1000);
		stream("queued", 100);
		stream("joined", 100, every(1200, 1600, 20));
		PeerView view = this.peers.during(self, 1000 * MS, 1600 * MS);
		assertThat(view.decoding()).isZero();
		assertThat(view.quietNanos()).as("bins 0 to 20, before the joined stream's first event at 1,200 ms")
			.isEqualTo(600 * MS * 21 / 64);
	}

	@Test
	void aStreamSilentSinceWellBeforeTheGapThatResumesAtItsEndWasRecomputedInThatStep() {
		StreamTimer self = stream("self", 100, 980, 1000);
		stream("other", 100, 981, 1001);
		StreamTimer victim = stream("victim", 2000, every(100, 400, 20));
		PeerView view = this.peers.during(self, 1000 * MS, 1600 * MS);
		assertThat(view.quietNanos()).isGreaterThan(500 * MS);
		assertThat(view.waiting()).hasSize(1);
		assertThat(view.resumedAtEnd(1600 * MS, 50 * MS)).containsExactly(0, 0);
		// Its first token after the recompute arrives with ours, after the gap was seen.
		victim.onContent(0, 1602 * MS, 1602 * MS + 1);
		assertThat(view.resumedAtEnd(1600 * MS, 50 * MS)).containsExactly(1, 2000 + 16);
	}

	/**
	 * Only the silent streams that may have resumed in the step that ended the gap are
	 * kept: one that resumed inside it, well before its end, was not recomputed there (at
	 * 1,000 streams of 200 ms a token half the others look silent in every gap, and each
	 * spike kept a record of every one).
	 */
	@Test
	void aSilentStreamThatResumedWellBeforeTheGapsEndIsNotKeptAsWaiting() {
		StreamTimer self = stream("self", 100, 980, 1000);
		long[] early = LongStream.concat(LongStream.of(every(100, 400, 20)), LongStream.of(1200, 1220)).toArray();
		stream("resumed-early", 3000, early);
		long[] atEnd = LongStream.concat(LongStream.of(every(100, 400, 20)), LongStream.of(1630)).toArray();
		stream("resumed-at-end", 2000, atEnd);
		stream("still-silent", 1000, every(100, 400, 20));
		PeerView view = this.peers.during(self, 1000 * MS, 1600 * MS);
		assertThat(view.decoding()).isEqualTo(3);
		assertThat(view.waiting()).extracting((waiting) -> waiting.peer().requestId())
			.containsExactlyInAnyOrder("resumed-at-end", "still-silent");
		assertThat(view.resumedAtEnd(1600 * MS, 50 * MS)).containsExactly(1, 2000 + 16);
	}

	@Test
	void aStreamStillWaitingWhenTheGapEndsWasNotRecomputedInIt() {
		StreamTimer self = stream("self", 100, 980, 1000);
		StreamTimer victim = stream("victim", 2000, every(100, 400, 20));
		PeerView view = this.peers.during(self, 1000 * MS, 1600 * MS);
		victim.onContent(0, 2500 * MS, 2500 * MS + 1);
		assertThat(view.resumedAtEnd(1600 * MS, 50 * MS)).containsExactly(0, 0);
	}

	@Test
	void aStreamWithMoreEventsInTheGapThanItsRingKeepsWasFed() {
		StreamTimer self = stream("self", 100, 980, 1000);
		stream("fast", 100, every(990, 3000, 5));
		PeerView view = this.peers.during(self, 1000 * MS, 3000 * MS);
		assertThat(view.fed()).isEqualTo(1);
	}

	@Test
	void aStreamThatEndedInsideTheGapStillSaysTheEngineKeptStepping() {
		StreamTimer self = stream("self", 100, 980, 5000);
		StreamTimer early = stream("early", 100, every(900, 3000, 20));
		this.peers.ended(early);
		StreamTimer late = stream("late", 100, every(3100, 5000, 20));
		PeerView view = this.peers.during(self, 1000 * MS, 5000 * MS);
		assertThat(view.decoding()).as("the one that was decoding when the gap began").isEqualTo(1);
		assertThat(view.fed()).isEqualTo(1);
		assertThat(view.quietNanos()).isLessThan(2000 * MS);
		assertThat(late.firstArrivalNanos()).isPositive();
	}

	@Test
	void aStreamThatEndedAfterTheGapClosedIsJudgedAsItWasWhenItClosed() {
		StreamTimer self = stream("self", 100, 980, 1000);
		long[] beside = every(900, 1340, 20);
		long[] arrivals = Arrays.copyOf(beside, beside.length + 1);
		// its next event came after the gap closed, and then it ended, before the look
		arrivals[beside.length] = 1800;
		StreamTimer other = stream("other", 100, arrivals);
		this.peers.ended(other);
		PeerView view = this.peers.during(self, 1000 * MS, 1600 * MS);
		assertThat(view.decoding()).isEqualTo(1);
		assertThat(view.fed()).as("fed until 260 ms before the gap closed, as when it was live").isEqualTo(1);
	}

	@Test
	void aStreamThatEndedBeforeTheGapIsNotLookedAt() {
		StreamTimer self = stream("self", 100, 980, 2000);
		StreamTimer other = stream("other", 100, every(900, 1000, 20));
		this.peers.ended(other);
		assertThat(this.peers.during(self, 1000 * MS, 2000 * MS).decoding()).isZero();
	}

	@Test
	void gapsReadInOnePassSeeWhatEachSeesAlone() {
		// A stall at 1,000 to 1,600 ms that "slow" shares, a gap of "fed" at 2,000 to
		// 2,400 ms that the others filled, "waiting" silent since 400 ms, and a stream
		// that ended inside the second gap.
		StreamTimer stalled = stream("stalled", 100, 980, 1000, 1600);
		StreamTimer slow = stream("slow", 100, 985, 1005, 1605, 1625);
		StreamTimer fed = stream("fed", 100, every(1600, 2000, 20));
		stream("beside", 100, every(900, 2500, 20));
		stream("waiting", 3000, every(100, 400, 20));
		StreamTimer ended = stream("ended", 100, every(1900, 2200, 20));
		this.peers.ended(ended);
		List<PeerStreams.Gap> gaps = List.of(new PeerStreams.Gap(stalled, 1000 * MS, 1600 * MS),
				new PeerStreams.Gap(fed, 2000 * MS, 2400 * MS), new PeerStreams.Gap(slow, 1005 * MS, 1605 * MS),
				new PeerStreams.Gap(stalled, 300 * MS, 980 * MS));
		List<PeerView> together = this.peers.during(gaps);
		assertThat(together).hasSize(gaps.size());
		for (int i = 0; i < gaps.size(); i++) {
			PeerStreams.Gap gap = gaps.get(i);
			PeerView alone = this.peers.during(gap.self(), gap.fromNanos(), gap.toNanos());
			PeerView view = together.get(i);
			assertThat(view.decoding()).as("decoding, gap %d", i).isEqualTo(alone.decoding());
			assertThat(view.fed()).as("fed, gap %d", i).isEqualTo(alone.fed());
			assertThat(view.quietNanos()).as("quiet, gap %d", i).isEqualTo(alone.quietNanos());
			assertThat(view.self()).isSameAs(gap.self());
			assertThat(view.waiting()).as("waiting, gap %d", i)
				.extracting((waiting) -> waiting.peer().requestId(), PeerView.Waiting::silentSinceNanos,
						(waiting) -> waiting.resumedNanos(new long[StreamTimer.RECENT_ARRIVALS]),
						PeerView.Waiting::eventsBefore)
				.containsExactlyInAnyOrderElementsOf(alone.waiting()
					.stream()
					.map((waiting) -> org.assertj.core.groups.Tuple.tuple(waiting.peer().requestId(),
							waiting.silentSinceNanos(), waiting.resumedNanos(new long[StreamTimer.RECENT_ARRIVALS]),
							waiting.eventsBefore()))
					.toList());
		}
		assertThat(together.get(0).waiting()).as("the stream silent since 400 ms, in the stall").hasSize(1);
		assertThat(together.get(1).fed()).as("the others kept receiving during the second gap").isEqualTo(2);
		assertThat(together.get(1).decoding()).as("all but the gap's own stream had begun").isEqualTo(5);
		assertThat(together.get(1).waiting()).as("silent since 1,625 ms or before").hasSize(3);
	}

	@Test
	void streamsThatEndFreeTheirPlaceForOthersAndAreNoLongerLive() {
		StreamTimer self = stream("self", 100, 980, 1000);
		List<StreamTimer> all = new java.util.ArrayList<>();
		for (int i = 0; i < 300; i++) {
			all.add(stream("s" + i, 100, every(900, 1600, 20)));
		}
		for (int i = 0; i < 300; i += 2) {
			this.peers.ended(all.get(i));
		}
		for (int i = 0; i < 100; i++) {
			stream("t" + i, 100, every(900, 1600, 20));
		}
		// 150 left, 100 joined; those that ended are read as ended streams, of which
		// the last 512 are kept: all 150 here.
		PeerView view = this.peers.during(self, 1000 * MS, 1600 * MS);
		assertThat(view.decoding()).isEqualTo(150 + 100 + 150);
		for (int i = 1; i < 300; i += 2) {
			this.peers.ended(all.get(i));
		}
		this.peers.ended(self);
		assertThat(this.peers.during(self, 1000 * MS, 1600 * MS).decoding()).as("the 100 live, and 300 ended")
			.isEqualTo(100 + 300);
	}

}
