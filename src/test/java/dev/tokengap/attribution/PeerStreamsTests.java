package dev.tokengap.attribution;

import java.util.Arrays;

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

}
