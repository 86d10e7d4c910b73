package dev.tokengap.timing;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.assertj.core.api.Assertions.withinPercentage;

/**
 * The gap clocks of one stream, on made-up times in milliseconds (as nanoseconds): exact
 * values, no wall clock.
 */
class StreamTimerTests {

	private static final long MS = 1_000_000;

	private final StreamTimer timer = new StreamTimer(0, 400 * MS);

	@Test
	void timesTheFirstTokenAndTheFirstByteFromTheRequest() {
		this.timer.onBodyWritten(100 * MS);
		assertThat(this.timer.onBodyWritten(150 * MS)).isFalse();
		this.timer.onContent(0, 240 * MS, 250 * MS);
		assertThat(this.timer.timeToFirstByteNanos()).isEqualTo(100 * MS);
		assertThat(this.timer.timeToFirstTokenNanos()).isEqualTo(250 * MS);
	}

	@Test
	void givesEachGapBetweenConsecutiveContentEventsAndCountsStalls() {
		assertThat(this.timer.onContent(0, 0, 100 * MS)).isEqualTo(-1);
		assertThat(this.timer.onContent(0, 0, 120 * MS)).isEqualTo(20 * MS);
		assertThat(this.timer.onContent(0, 0, 520 * MS)).isEqualTo(400 * MS);
		assertThat(this.timer.onContent(0, 0, 530 * MS)).isEqualTo(10 * MS);
		assertThat(this.timer.gapCount()).isEqualTo(3);
		assertThat(this.timer.stalls()).as("400 ms is at the threshold").isEqualTo(1);
		assertThat(this.timer.maxGapNanos()).isEqualTo(400 * MS);
	}

	/**
	 * n=2 as vLLM sends it: one chunk per choice per engine step, a millisecond apart.
	 * Every gap is a step (30 ms), never the millisecond between two choices.
	 */
	@Test
	void keepsOneClockPerChoiceSoInterleavedChoicesMakeNoNearZeroGaps() {
		long t = 100;
		for (int step = 0; step < 5; step++) {
			long gap0 = this.timer.onContent(0, 0, t * MS);
			long gap1 = this.timer.onContent(1, 0, (t + 1) * MS);
			if (step > 0) {
				assertThat(gap0).isEqualTo(30 * MS);
				assertThat(gap1).isEqualTo(30 * MS);
			}
			t += 30;
		}
		assertThat(this.timer.choices()).isEqualTo(2);
		assertThat(this.timer.contentEvents()).isEqualTo(10);
		assertThat(this.timer.gapCount()).isEqualTo(8);
		assertThat(this.timer.gapPercentileNanos(0.01)).as("within the record's 1.6%")
			.isCloseTo(30 * MS, withinPercentage(2));
		assertThat(this.timer.timeToFirstTokenNanos()).as("the first content of any choice").isEqualTo(100 * MS);
	}

	@Test
	void countsAStallOfEachChoice() {
		this.timer.onContent(0, 0, 0);
		this.timer.onContent(1, 0, 1 * MS);
		this.timer.onContent(0, 0, 600 * MS);
		this.timer.onContent(1, 0, 601 * MS);
		assertThat(this.timer.stalls()).isEqualTo(2);
	}

	@Test
	void remembersEachChoicesLastWriteAndArrival() {
		this.timer.onContent(0, 90 * MS, 100 * MS);
		this.timer.onContent(1, 91 * MS, 101 * MS);
		this.timer.onContent(0, 120 * MS, 130 * MS);
		assertThat(this.timer.lastContentNanos(0)).isEqualTo(130 * MS);
		assertThat(this.timer.lastArrivalNanos(0)).isEqualTo(120 * MS);
		assertThat(this.timer.lastContentNanos(1)).isEqualTo(101 * MS);
		assertThat(this.timer.lastArrivalNanos(1)).isEqualTo(91 * MS);
		assertThat(this.timer.lastContentNanos(2)).isEqualTo(-1);
		assertThat(this.timer.contentEvents(0)).isEqualTo(2);
	}

	@Test
	void sharesTheLastClockAmongChoiceIndexesBeyondItsCapacity() {
		this.timer.onContent(StreamTimer.MAX_CHOICES - 1, 0, 0);
		assertThat(this.timer.onContent(StreamTimer.MAX_CHOICES + 5, 0, 10 * MS)).isEqualTo(10 * MS);
		assertThat(this.timer.choices()).isEqualTo(StreamTimer.MAX_CHOICES);
	}

	@Test
	void timePerOutputTokenUsesTheStreamsUsageForOneChoice() {
		this.timer.onContent(0, 0, 100 * MS);
		this.timer.onContent(0, 0, 200 * MS);
		this.timer.onContent(0, 0, 300 * MS);
		this.timer.onOutputTokens(-1, 11);
		assertThat(this.timer.timePerOutputTokenSeconds(0)).isCloseTo(0.2 / 10, within(1e-12));
	}

	@Test
	void timePerOutputTokenCountsContentEventsWithoutUsage() {
		this.timer.onContent(0, 0, 100 * MS);
		this.timer.onContent(0, 0, 300 * MS);
		assertThat(this.timer.timePerOutputTokenSeconds(0)).isCloseTo(0.2, within(1e-12));
	}

	/**
	 * With several choices the final usage chunk is their sum: each choice uses its own
	 * usage (continuous usage) or its own events, never the sum.
	 */
	@Test
	void timePerOutputTokenOfSeveralChoicesIgnoresTheSummedUsage() {
		this.timer.onContent(0, 0, 100 * MS);
		this.timer.onContent(1, 0, 100 * MS);
		this.timer.onContent(0, 0, 300 * MS);
		this.timer.onOutputTokens(0, 5);
		this.timer.onContent(1, 0, 500 * MS);
		this.timer.onOutputTokens(-1, 100);
		assertThat(this.timer.timePerOutputTokenSeconds(0)).isCloseTo(0.2 / 4, within(1e-12));
		assertThat(this.timer.timePerOutputTokenSeconds(1)).isCloseTo(0.4, within(1e-12));
	}

	@Test
	void hasNoTimePerOutputTokenWithOneToken() {
		this.timer.onContent(0, 0, 100 * MS);
		assertThat(this.timer.timePerOutputTokenSeconds(0)).isNaN();
		assertThat(this.timer.timePerOutputTokenSeconds(3)).isNaN();
	}

	@Test
	void isStalledOnlyWhileLiveAndPastTheThresholdSinceAnyChoicesLastContent() {
		assertThat(this.timer.stalledAt(10_000 * MS)).as("queued, not stalled").isFalse();
		this.timer.onContent(0, 0, 100 * MS);
		this.timer.onContent(1, 0, 300 * MS);
		assertThat(this.timer.stalledAt(650 * MS)).isFalse();
		assertThat(this.timer.stalledAt(701 * MS)).isTrue();
		this.timer.end();
		assertThat(this.timer.stalledAt(701 * MS)).isFalse();
	}

	@Test
	void givesTheJitterRatioOnlyWithEnoughGaps() {
		this.timer.onContent(0, 0, 0);
		for (int i = 1; i <= 9; i++) {
			this.timer.onContent(0, 0, i * 10 * MS);
		}
		assertThat(this.timer.jitterRatio(10)).isNaN();
		this.timer.onContent(0, 0, 190 * MS);
		assertThat(this.timer.jitterRatio(10)).isCloseTo(10.0, within(0.2));
	}

	@Test
	void keepsTheArrivalsOfTheLastContentEventsNewestFirst() {
		long[] arrivals = new long[StreamTimer.RECENT_ARRIVALS];
		assertThat(this.timer.recentArrivals(arrivals)).as("none before the first content event").isZero();
		assertThat(this.timer.lastArrivalNanos()).isEqualTo(-1);
		for (int i = 0; i < 3; i++) {
			this.timer.onContent(i % 2, (100 + i) * MS, (101 + i) * MS);
		}
		assertThat(this.timer.recentArrivals(arrivals)).isEqualTo(3);
		assertThat(arrivals).startsWith(102 * MS, 101 * MS, 100 * MS);
		assertThat(this.timer.firstArrivalNanos()).isEqualTo(100 * MS);
		assertThat(this.timer.lastArrivalNanos()).isEqualTo(102 * MS);
		assertThat(this.timer.recentArrivalsWrapped()).isFalse();
	}

	@Test
	void keepsOnlyTheLastRecentArrivals() {
		int kept = StreamTimer.RECENT_ARRIVALS;
		int events = kept + 36;
		for (int i = 0; i < events; i++) {
			this.timer.onContent(0, i * MS, i * MS + 1);
		}
		long[] arrivals = new long[kept];
		assertThat(this.timer.recentArrivals(arrivals)).isEqualTo(kept);
		assertThat(arrivals[0]).isEqualTo((events - 1) * MS);
		assertThat(arrivals[kept - 1]).isEqualTo(36 * MS);
		assertThat(this.timer.recentArrivalsWrapped()).isTrue();
		long[] few = new long[5];
		assertThat(this.timer.recentArrivals(few)).isEqualTo(5);
		long last = events - 1;
		assertThat(few).containsExactly(last * MS, (last - 1) * MS, (last - 2) * MS, (last - 3) * MS, (last - 4) * MS);
	}

	@Test
	void copiesArrivalsOnlyDownToTheFirstAtOrBeforeAnInstant() {
		int kept = StreamTimer.RECENT_ARRIVALS;
		int events = kept + 36;
		long last = events - 1;
		for (int i = 0; i < events; i++) {
			this.timer.onContent(0, i * MS, i * MS + 1);
		}
		long[] arrivals = new long[kept];
		assertThat(this.timer.recentArrivals(arrivals, (last - 3) * MS)).isEqualTo(4);
		assertThat(arrivals).startsWith(last * MS, (last - 1) * MS, (last - 2) * MS, (last - 3) * MS);
		assertThat(this.timer.recentArrivals(arrivals, (last - 3) * MS + 1)).as("the first before it ends the copy")
			.isEqualTo(4);
		assertThat(this.timer.recentArrivals(arrivals, last * MS)).isEqualTo(1);
		assertThat(this.timer.recentArrivals(arrivals, 10 * MS)).as("older than the ring: all it keeps")
			.isEqualTo(kept);
		assertThat(arrivals[kept - 1]).isEqualTo(36 * MS);
	}

	@Test
	void keepsTheEnginesFirstReport() {
		EngineReport first = new EngineReport(1, 2, 3, 4, -1);
		this.timer.engineReported(first);
		this.timer.engineReported(new EngineReport(5, 6, 7, 8, 0));
		assertThat(this.timer.engineReport()).isSameAs(first);
		assertThat(first.hasGenerationTime()).isTrue();
		assertThat(first.hasPreemptions()).isFalse();
	}

}
