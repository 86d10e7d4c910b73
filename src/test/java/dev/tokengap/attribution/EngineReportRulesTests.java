package dev.tokengap.attribution;

import java.util.List;

import org.junit.jupiter.api.Test;

import dev.tokengap.timing.EngineReport;
import dev.tokengap.timing.StreamTimer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The engine's per-request figures correct a stream's spikes: made-up times (ms), one
 * stream of 20 ms gaps from 1,000 ms to 3,000 ms with one 600 ms spike.
 */
class EngineReportRulesTests {

	static final long MS = 1_000_000;

	/** A 600 ms gap in a stream whose usual gap is 20 ms (threshold 4 x 25 ms). */
	static final Spike SPIKE = new Spike("r", "m", "chat_completions", 0, 40, 100 * MS,
			new GapWindow(new EventTimes(1800 * MS, 1800 * MS), new EventTimes(2400 * MS, 2401 * MS), 2400 * MS, 0), 0,
			null);

	private final StreamTimer timer = new StreamTimer(0, 1_000 * MS);

	EngineReportRulesTests() {
		this.timer.onContent(0, 1000 * MS, 1000 * MS);
		this.timer.onContent(0, 3000 * MS, 3000 * MS);
	}

	private static SpikeAttributor.Judged judged(SpikeCause cause, SpikeScope scope, SpikeCause... matched) {
		return judged(CauseRulesTests.withPeers(6, 5, 0, 0, CauseRulesTests.NONE,
				CauseRulesTests.sample(1700, 7, 1, 0.99, 10, 0), CauseRulesTests.sample(2500, 7, 1, 0.99, 11, 0)),
				cause, scope, matched);
	}

	private static SpikeAttributor.Judged judged(Evidence evidence, SpikeCause cause, SpikeScope scope,
			SpikeCause... matched) {
		CauseRules.Verdict verdict = new CauseRules.Verdict(cause, List.of(matched), scope, Magnitudes.NONE);
		SpikeRecord record = SpikeRecord.of(SPIKE, verdict, evidence);
		return new SpikeAttributor.Judged(SPIKE, record, new SpikeAttributor.Kept(record));
	}

	private List<SpikeRecord> correct(SpikeAttributor.Judged judged, EngineReport report) {
		return EngineReportRules.correct(List.of(judged), this.timer, report, CauseRulesTests.PROPERTIES);
	}

	@Test
	void aGapTheEnginesOwnDecodeTimeDoesNotContainWasLostAfterTheEngine() {
		// The engine decoded for 1,400 ms; tokengap received the stream over 2,000 ms.
		SpikeRecord record = correct(judged(SpikeCause.PREEMPTION, SpikeScope.SINGLED_OUT, SpikeCause.PREEMPTION),
				new EngineReport(5, 80, 1400, 20, -1))
			.get(0);
		assertThat(record.cause()).isEqualTo("engine_other");
		assertThat(record.scope()).isEqualTo("after_engine");
		assertThat(record.causes()).containsExactly("engine_other", "preemption");
		assertThat(record.summary()).contains("1400 ms").contains("was preemption: singled out");
		assertThat(record.engine().generationMs()).isEqualTo(1400);
	}

	@Test
	void aGapTheEnginesDecodeTimeContainsStaysTheEngines() {
		SpikeRecord record = correct(judged(SpikeCause.PREEMPTION, SpikeScope.SINGLED_OUT, SpikeCause.PREEMPTION),
				new EngineReport(5, 80, 1990, 20, -1))
			.get(0);
		assertThat(record.cause()).isEqualTo("preemption");
		assertThat(record.scope()).isEqualTo("singled_out");
		assertThat(record.engine()).isNotNull();
	}

	@Test
	void noPreemptionOfItsOwnMeansASingledOutStallWasNotOne() {
		SpikeRecord record = correct(judged(SpikeCause.PREEMPTION, SpikeScope.SINGLED_OUT, SpikeCause.PREEMPTION),
				new EngineReport(5, 80, 1990, 20, 0))
			.get(0);
		assertThat(record.cause()).isEqualTo("engine_other");
		assertThat(record.summary()).contains("never preempted");
	}

	@Test
	void theEnginesHistogramSayingNoPreemptionLeavesALoneStallToWhatElseMatched() {
		SpikeRecord record = EngineReportRules
			.correct(
					List.of(judged(SpikeCause.PREEMPTION, SpikeScope.ALONE, SpikeCause.PREEMPTION,
							SpikeCause.BATCH_GROWTH)),
					this.timer, EngineReport.withPreemptions(null, 0), CauseRulesTests.PROPERTIES,
					"the engine's per-request preemption histogram says")
			.get(0);
		assertThat(record.cause()).isEqualTo("batch_growth");
		assertThat(record.scope()).isEqualTo("alone");
		assertThat(record.summary()).contains("the engine's per-request preemption histogram says it never preempted");
		assertThat(record.engine().generationMs()).isNaN();
	}

	@Test
	void aPreemptionOfItsOwnExplainsASingledOutStallTheGaugesMissed() {
		SpikeRecord record = correct(judged(SpikeCause.ENGINE_OTHER, SpikeScope.SINGLED_OUT, SpikeCause.ENGINE_OTHER),
				new EngineReport(5, 80, 1990, 20, 2))
			.get(0);
		assertThat(record.cause()).isEqualTo("preemption");
	}

	@Test
	void aRequestPreemptedAtOtherTimesDoesNotExplainAStallInWhichThePreemptionCounterStoodStill() {
		Evidence still = CauseRulesTests.withPeers(6, 5, 0, 0, CauseRulesTests.NONE,
				CauseRulesTests.sample(900, 7, 1, 0.5, 11, 0), CauseRulesTests.sample(1400, 7, 1, 0.5, 11, 0));
		assertThat(still.preemptions()).isZero();
		SpikeRecord record = correct(
				judged(still, SpikeCause.ENGINE_OTHER, SpikeScope.SINGLED_OUT, SpikeCause.ENGINE_OTHER),
				new EngineReport(5, 80, 1990, 20, 2))
			.get(0);
		assertThat(record.cause()).isEqualTo("engine_other");
	}

	@Test
	void clientBackpressureIsNeverCorrected() {
		SpikeRecord record = correct(
				judged(SpikeCause.CLIENT_BACKPRESSURE, SpikeScope.CLIENT, SpikeCause.CLIENT_BACKPRESSURE),
				new EngineReport(5, 80, 100, 20, 0))
			.get(0);
		assertThat(record.cause()).isEqualTo("client_backpressure");
	}

}
