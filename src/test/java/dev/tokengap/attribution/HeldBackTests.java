package dev.tokengap.attribution;

import org.junit.jupiter.api.Test;

import dev.tokengap.timing.StreamTimer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Events held up after the engine come in a burst once released; the engine's own pace
 * after a slow step does not. Made-up arrival times (ms) of one stream with 20 ms steps.
 */
class HeldBackTests {

	static final long MS = 1_000_000;

	/** A 600 ms gap from 1,000 ms to 1,600 ms. */
	static final Spike GAP = new Spike("r", "m", "chat_completions", 0, 11, 100 * MS,
			new GapWindow(new EventTimes(1000 * MS, 1000 * MS), new EventTimes(1600 * MS, 1601 * MS), 1600 * MS, 0), 0,
			null);

	private final StreamTimer timer = new StreamTimer(0, 1_000 * MS);

	private void arrive(int choice, long... ms) {
		for (long t : ms) {
			this.timer.onContent(choice, t * MS, t * MS + 1);
		}
	}

	@Test
	void eventsReleasedTogetherAfterTheGapAreHeldBack() {
		arrive(0, 800, 820, 840, 860, 880, 900, 920, 940, 960, 980, 1000, 1600);
		// The 29 the engine made during the gap, released at once.
		for (int i = 1; i <= 29; i++) {
			this.timer.onContent(0, 1600 * MS + i * 10_000, 1600 * MS + i * 10_000 + 1);
		}
		assertThat(SpikeAttributor.heldBack(GAP, this.timer)).isEqualTo(29);
	}

	@Test
	void theEnginesOwnPaceAfterASlowStepIsNot() {
		arrive(0, 800, 820, 840, 860, 880, 900, 920, 940, 960, 980, 1000, 1600, 1620, 1640, 1660);
		assertThat(SpikeAttributor.heldBack(GAP, this.timer)).isZero();
	}

	@Test
	void aFastEngineIsJudgedByItsOwnPace() {
		Spike gap = new Spike("r", "m", "chat_completions", 0, 11, 100 * MS,
				new GapWindow(new EventTimes(1000 * MS, 1000 * MS), new EventTimes(1200 * MS, 1201 * MS), 1200 * MS, 0),
				0, null);
		arrive(0, 990, 991, 992, 993, 994, 995, 996, 997, 998, 999, 1000, 1200, 1201, 1202, 1203, 1204);
		assertThat(SpikeAttributor.heldBack(gap, this.timer)).isZero();
	}

	@Test
	void twoChoicesOfOneStepAreOneStep() {
		for (long t = 800; t <= 1000; t += 20) {
			arrive(0, t);
			arrive(1, t);
		}
		arrive(0, 1600);
		arrive(1, 1600);
		arrive(0, 1620);
		arrive(1, 1620);
		assertThat(SpikeAttributor.heldBack(GAP, this.timer)).isZero();
	}

	@Test
	void tooFewEventsBeforeTheGapToKnowThePace() {
		arrive(0, 980, 1000, 1600, 1600, 1600, 1600, 1600, 1600);
		assertThat(SpikeAttributor.heldBack(GAP, this.timer)).isZero();
	}

}
