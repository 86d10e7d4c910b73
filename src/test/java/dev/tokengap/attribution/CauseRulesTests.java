package dev.tokengap.attribution;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import dev.tokengap.backend.EngineSample;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The rules on hand-made evidence: one case per cause, and the order between them.
 */
class CauseRulesTests {

	static final long MS = 1_000_000;

	static final AttributionProperties PROPERTIES = new AttributionProperties(Duration.ofMillis(100), 4, 200, 1024, 1.5,
			0.9, 10, 10_000, Duration.ofSeconds(10));

	/** A 300 ms gap that arrived 300 ms late from upstream (the engine was slow). */
	static final Spike LATE = new Spike("r", "m", "chat_completions", 0, 7, 100 * MS,
			new GapWindow(new EventTimes(1000 * MS, 1001 * MS), new EventTimes(1300 * MS, 1301 * MS), 1300 * MS, 0), 0,
			null);

	static EngineSample sample(long ms, double running, double waiting, double kv, double preemptions, double prompt) {
		return new EngineSample(ms * MS, running, waiting, Double.NaN, kv, preemptions, prompt, 0);
	}

	/**
	 * A sample of an engine with the by-reason and by-source families (vLLM since 2026).
	 */
	static EngineSample newer(long ms, double running, double waiting, double capacity, double kv, double prompt,
			double computed) {
		return new EngineSample(ms * MS, running, waiting, Double.NaN, kv, 0, prompt, 0, capacity, computed);
	}

	static Evidence evidence(Spike spike, long[] firstTokens, EngineSample... window) {
		return Evidence.of(spike, window, 500 * MS, firstTokens);
	}

	static final long[] NONE = { 0, 0 };

	@Test
	void aTimelyArrivalWaitingForTheClientsSocketIsClientBackpressureWhateverTheEngineDid() {
		Spike spike = new Spike("r", "m", "e", 0, 7, 100 * MS,
				new GapWindow(new EventTimes(1000 * MS, 1001 * MS), new EventTimes(1020 * MS, 1301 * MS), 1021 * MS, 0),
				0, null);
		Evidence evidence = evidence(spike, NONE, sample(900, 4, 0, 0.5, 0, 0), sample(1400, 4, 0, 0.5, 3, 0));
		assertThat(CauseRules.decide(spike, evidence, PROPERTIES)).isEqualTo(SpikeCause.CLIENT_BACKPRESSURE);
	}

	@Test
	void aTimelyArrivalWhoseWriteStartedLateIsOutsideTheEngine() {
		Spike spike = new Spike("r", "m", "e", 0, 7, 100 * MS,
				new GapWindow(new EventTimes(1000 * MS, 1001 * MS), new EventTimes(1020 * MS, 1301 * MS), 1300 * MS, 0),
				0, null);
		Evidence evidence = evidence(spike, NONE, sample(900, 4, 0, 0.5, 0, 0), sample(1400, 4, 0, 0.5, 0, 0));
		assertThat(CauseRules.decide(spike, evidence, PROPERTIES)).isEqualTo(SpikeCause.ENGINE_OTHER);
	}

	/**
	 * An event split across two upstream buffers: the write of its first part waited 290
	 * ms for the client's socket, so tokengap read its last part from the engine 290 ms
	 * late, and the write of that last part was immediate.
	 */
	@Test
	void anEventWhoseFirstPartWaitedForTheClientsSocketIsClientBackpressure() {
		Spike spike = new Spike("r", "m", "e", 0, 7, 100 * MS, new GapWindow(new EventTimes(1000 * MS, 1001 * MS),
				new EventTimes(1300 * MS, 1301 * MS), 1300 * MS, 290 * MS), 0, null);
		Evidence evidence = evidence(spike, NONE, sample(900, 4, 0, 0.5, 0, 0), sample(1400, 4, 0, 0.5, 3, 0));
		assertThat(CauseRules.decide(spike, evidence, PROPERTIES)).isEqualTo(SpikeCause.CLIENT_BACKPRESSURE);
	}

	@Test
	void anEngineGapLongerThanTheEarlierSocketWaitIsStillTheEnginesToExplain() {
		Spike spike = new Spike("r", "m", "e", 0, 7, 100 * MS, new GapWindow(new EventTimes(1000 * MS, 1001 * MS),
				new EventTimes(1300 * MS, 1301 * MS), 1300 * MS, 50 * MS), 0, null);
		Evidence evidence = evidence(spike, NONE, sample(900, 4, 0, 0.5, 0, 0), sample(1400, 4, 0, 0.5, 3, 0));
		assertThat(CauseRules.decide(spike, evidence, PROPERTIES)).isEqualTo(SpikeCause.PREEMPTION);
	}

	@Test
	void noSamplesAroundTheGapIsUnknown() {
		assertThat(CauseRules.decide(LATE, evidence(LATE, NONE), PROPERTIES)).isEqualTo(SpikeCause.UNKNOWN);
		Evidence stale = evidence(LATE, NONE, sample(100, 4, 0, 0.5, 0, 0), sample(1400, 4, 0, 0.5, 0, 0));
		assertThat(CauseRules.decide(LATE, stale, PROPERTIES)).isEqualTo(SpikeCause.UNKNOWN);
	}

	@Test
	void aRisingPreemptionCounterWinsOverEverythingElse() {
		Evidence evidence = evidence(LATE, new long[] { 3, 9000 }, sample(900, 4, 0, 0.95, 10, 0),
				sample(1400, 12, 5, 0.99, 11, 5000));
		assertThat(CauseRules.decide(LATE, evidence, PROPERTIES)).isEqualTo(SpikeCause.PREEMPTION);
	}

	@Test
	void anotherRequestsLongPrefillIsPrefillInterference() {
		Evidence seen = evidence(LATE, new long[] { 1, 4000 }, sample(900, 4, 0, 0.5, 0, 0),
				sample(1400, 5, 0, 0.5, 0, 0));
		assertThat(CauseRules.decide(LATE, seen, PROPERTIES)).isEqualTo(SpikeCause.PREFILL_INTERFERENCE);
		Evidence counted = evidence(LATE, NONE, sample(900, 4, 0, 0.5, 0, 100), sample(1400, 4, 0, 0.5, 0, 6100));
		assertThat(CauseRules.decide(LATE, counted, PROPERTIES)).isEqualTo(SpikeCause.PREFILL_INTERFERENCE);
	}

	@Test
	void aLongPromptServedFromThePrefixCacheIsNotPrefillInterference() {
		Evidence evidence = evidence(LATE, new long[] { 1, 4000 }, newer(900, 4, 0, 0, 0.5, 100, 100),
				newer(1400, 5, 0, 0, 0.5, 4100, 116));
		assertThat(evidence.promptTokens()).isEqualTo(4000);
		assertThat(evidence.promptTokensComputed()).isEqualTo(16);
		assertThat(CauseRules.decide(LATE, evidence, PROPERTIES)).isEqualTo(SpikeCause.ENGINE_OTHER);
	}

	@Test
	void promptTokensTheEngineComputedAreStillPrefillInterference() {
		Evidence evidence = evidence(LATE, NONE, newer(900, 4, 0, 0, 0.5, 100, 100),
				newer(1400, 4, 0, 0, 0.5, 6100, 6100));
		assertThat(CauseRules.decide(LATE, evidence, PROPERTIES)).isEqualTo(SpikeCause.PREFILL_INTERFERENCE);
	}

	@Test
	void manyCachedPromptsJoiningAreBatchGrowthNotPrefill() {
		Evidence evidence = evidence(LATE, new long[] { 30, 60_000 }, newer(900, 2, 0, 0, 0.3, 0, 0),
				newer(1400, 2, 0, 0, 0.3, 60_000, 480));
		assertThat(CauseRules.decide(LATE, evidence, PROPERTIES)).isEqualTo(SpikeCause.BATCH_GROWTH);
	}

	@Test
	void withoutTheLocalComputeCounterTheEstimateAndThePromptCounterStillCount() {
		Evidence seen = evidence(LATE, new long[] { 1, 4000 }, sample(900, 4, 0, 0.5, 0, 0),
				newer(1400, 5, 0, 0, 0.5, 16, 16));
		assertThat(seen.promptTokensComputed()).as("one sample from before the engine had it").isNull();
		assertThat(CauseRules.decide(LATE, seen, PROPERTIES)).isEqualTo(SpikeCause.PREFILL_INTERFERENCE);
		Evidence counted = evidence(LATE, NONE, sample(900, 4, 0, 0.5, 0, 100), sample(1400, 4, 0, 0.5, 0, 6100));
		assertThat(counted.promptTokensComputed()).isNull();
		assertThat(CauseRules.decide(LATE, counted, PROPERTIES)).isEqualTo(SpikeCause.PREFILL_INTERFERENCE);
	}

	@Test
	void aMarkedRiseOfTheRunningCountIsBatchGrowth() {
		Evidence evidence = evidence(LATE, NONE, sample(900, 2, 0, 0.3, 0, 0), sample(1200, 30, 0, 0.3, 0, 300),
				sample(1400, 2, 0, 0.3, 0, 300));
		assertThat(CauseRules.decide(LATE, evidence, PROPERTIES)).isEqualTo(SpikeCause.BATCH_GROWTH);
	}

	@Test
	void manyShortRequestsJoiningBetweenScrapesIsBatchGrowth() {
		Evidence evidence = evidence(LATE, new long[] { 30, 750 }, sample(900, 2, 0, 0.3, 0, 0),
				sample(1400, 2, 0, 0.3, 0, 300));
		assertThat(CauseRules.decide(LATE, evidence, PROPERTIES)).isEqualTo(SpikeCause.BATCH_GROWTH);
	}

	@Test
	void aWaitingQueueWithANearlyFullKvCacheIsQueuePressure() {
		Evidence evidence = evidence(LATE, NONE, sample(900, 8, 3, 0.95, 0, 0), sample(1400, 8, 4, 0.96, 0, 0));
		assertThat(CauseRules.decide(LATE, evidence, PROPERTIES)).isEqualTo(SpikeCause.QUEUE_PRESSURE);
	}

	@Test
	void requestsWaitingForCapacityWithANearlyFullKvCacheAreQueuePressure() {
		Evidence evidence = evidence(LATE, NONE, newer(900, 8, 5, 2, 0.95, 0, 0), newer(1400, 8, 5, 3, 0.96, 0, 0));
		assertThat(evidence.waitingForCapacityMax()).isEqualTo(3);
		assertThat(CauseRules.decide(LATE, evidence, PROPERTIES)).isEqualTo(SpikeCause.QUEUE_PRESSURE);
	}

	@Test
	void aQueueOfOnlyDeferredRequestsIsNotQueuePressure() {
		Evidence evidence = evidence(LATE, NONE, newer(900, 8, 3, 0, 0.95, 0, 0), newer(1400, 8, 4, 0, 0.96, 0, 0));
		assertThat(evidence.waitingMax()).isEqualTo(4);
		assertThat(evidence.waitingForCapacityMax()).isZero();
		assertThat(CauseRules.decide(LATE, evidence, PROPERTIES)).isEqualTo(SpikeCause.ENGINE_OTHER);
	}

	@Test
	void withoutTheByReasonGaugeThePlainWaitingGaugeCounts() {
		Evidence evidence = evidence(LATE, NONE, newer(900, 8, 3, 0, 0.95, 0, 0), sample(1400, 8, 4, 0.96, 0, 0));
		assertThat(evidence.waitingForCapacityMax()).as("one sample from before the engine had it").isNull();
		assertThat(CauseRules.decide(LATE, evidence, PROPERTIES)).isEqualTo(SpikeCause.QUEUE_PRESSURE);
	}

	@Test
	void steadyGaugesAreEngineOther() {
		Evidence evidence = evidence(LATE, NONE, sample(900, 8, 0, 0.5, 2, 10), sample(1400, 8, 0, 0.5, 2, 10));
		assertThat(CauseRules.decide(LATE, evidence, PROPERTIES)).isEqualTo(SpikeCause.ENGINE_OTHER);
	}

	/** The evidence of LATE with what the other streams received during it. */
	static Evidence withPeers(int decoding, int fed, long resumed, long recomputeTokens, long[] firstTokens,
			EngineSample... window) {
		return withPeers(decoding, fed, resumed, recomputeTokens, 0, firstTokens, window);
	}

	/** As above, with this stream's events in a burst right after the gap. */
	static Evidence withPeers(int decoding, int fed, long resumed, long recomputeTokens, int heldBack,
			long[] firstTokens, EngineSample... window) {
		Evidence base = evidence(LATE, firstTokens, window);
		return new Evidence(base.engineCovered(), base.engineSamples(), base.preemptions(), base.promptTokens(),
				base.promptTokensComputed(), base.runningBefore(), base.runningMax(), base.waitingMax(),
				base.waitingForCapacityMax(), base.kvUsageMax(), base.otherFirstTokens(), base.otherPromptTokens(),
				decoding, fed, (fed > 0) ? 0.1 : 1.0, resumed, recomputeTokens, heldBack, base.paceNanos(),
				base.preemptionsInGap(), base.promptTokensInGap(), base.promptTokensComputedInGap(),
				base.runningAtStart(), base.runningAtEnd(), base.prefillNanosPerToken(), base.promptComputedShare(),
				base.promptTokensUnseenInGap());
	}

	@Test
	void aStallOnlyThisStreamHadWhileThePreemptionCounterRoseIsItsOwnPreemption() {
		Evidence evidence = withPeers(6, 5, 0, 0, NONE, sample(900, 7, 1, 0.99, 10, 0),
				sample(1400, 6, 2, 0.99, 12, 0));
		CauseRules.Verdict verdict = CauseRules.verdict(LATE, evidence, PROPERTIES);
		assertThat(verdict.cause()).isEqualTo(SpikeCause.PREEMPTION);
		assertThat(verdict.scope()).isEqualTo(SpikeScope.SINGLED_OUT);
		assertThat(verdict.matched()).containsExactly(SpikeCause.PREEMPTION, SpikeCause.QUEUE_PRESSURE);
	}

	@Test
	void aStallEveryStreamSharedIsNotBlamedOnAPreemptionElsewhere() {
		Evidence evidence = withPeers(6, 0, 0, 0, NONE, sample(900, 7, 0, 0.8, 10, 0), sample(1400, 7, 0, 0.8, 11, 0));
		CauseRules.Verdict verdict = CauseRules.verdict(LATE, evidence, PROPERTIES);
		assertThat(verdict.cause()).isEqualTo(SpikeCause.ENGINE_OTHER);
		assertThat(verdict.scope()).isEqualTo(SpikeScope.ENGINE_WIDE);
		assertThat(verdict.matched()).containsExactly(SpikeCause.ENGINE_OTHER, SpikeCause.PREEMPTION);
		assertThat(SpikeRecord.summary(verdict, evidence)).isEqualTo(
				"engine_other: engine-wide stall, none of 6 other streams received content, nothing in the engine's scheduling explains it; also matched: preemptions elsewhere in the window (+1) (275 ms over the stream's 25 ms pace: no prefill, no batch growth; 275 ms (100%) unexplained)");
	}

	@Test
	void anEngineWideStallWhosePrefillOfNewPromptsIsInTheWindowIsPrefillInterference() {
		Evidence evidence = withPeers(6, 0, 0, 0, new long[] { 1, 4000 }, sample(900, 7, 0, 0.8, 10, 0),
				sample(1400, 8, 0, 0.8, 11, 4000));
		CauseRules.Verdict verdict = CauseRules.verdict(LATE, evidence, PROPERTIES);
		assertThat(verdict.cause()).isEqualTo(SpikeCause.PREFILL_INTERFERENCE);
		assertThat(verdict.matched()).containsExactly(SpikeCause.PREFILL_INTERFERENCE, SpikeCause.PREEMPTION);
	}

	@Test
	void anEngineWideStallInWhichAPreemptedStreamResumedIsItsRecompute() {
		Evidence evidence = withPeers(6, 0, 1, 2500, NONE, sample(900, 6, 1, 0.8, 10, 0),
				sample(1400, 7, 0, 0.8, 10, 0));
		CauseRules.Verdict verdict = CauseRules.verdict(LATE, evidence, PROPERTIES);
		assertThat(verdict.cause()).isEqualTo(SpikeCause.PREEMPTION);
		assertThat(verdict.scope()).isEqualTo(SpikeScope.ENGINE_WIDE);
		assertThat(SpikeRecord.summary(verdict, evidence)).contains("recompute of 1 preempted streams (2500 tokens)");
	}

	@Test
	void recomputeAndNewPromptsInOneStallAreWeighedByTheirTokens() {
		Evidence more = withPeers(6, 0, 1, 5000, new long[] { 1, 2000 }, sample(900, 6, 1, 0.8, 10, 0),
				sample(1400, 7, 0, 0.8, 10, 2000));
		assertThat(CauseRules.decide(LATE, more, PROPERTIES)).isEqualTo(SpikeCause.PREEMPTION);
		Evidence less = withPeers(6, 0, 1, 1500, new long[] { 1, 4000 }, sample(900, 6, 1, 0.8, 10, 0),
				sample(1400, 7, 0, 0.8, 10, 4000));
		assertThat(CauseRules.decide(LATE, less, PROPERTIES)).isEqualTo(SpikeCause.PREFILL_INTERFERENCE);
	}

	@Test
	void aShortRecomputeDoesNotExplainAnEngineWideStall() {
		Evidence evidence = withPeers(6, 0, 1, 300, NONE, sample(900, 6, 1, 0.8, 10, 0),
				sample(1400, 7, 0, 0.8, 10, 0));
		assertThat(CauseRules.decide(LATE, evidence, PROPERTIES)).isEqualTo(SpikeCause.ENGINE_OTHER);
	}

	@Test
	void aSingledOutStallIsNotBlamedOnWhatSlowsEveryStreamsStep() {
		Evidence evidence = withPeers(6, 6, 0, 0, new long[] { 3, 9000 }, sample(900, 4, 3, 0.95, 0, 0),
				sample(1400, 12, 5, 0.99, 0, 9000));
		CauseRules.Verdict verdict = CauseRules.verdict(LATE, evidence, PROPERTIES);
		assertThat(verdict.cause()).isEqualTo(SpikeCause.ENGINE_OTHER);
		assertThat(verdict.matched()).containsExactly(SpikeCause.ENGINE_OTHER, SpikeCause.PREFILL_INTERFERENCE,
				SpikeCause.BATCH_GROWTH, SpikeCause.QUEUE_PRESSURE);
	}

	@Test
	void withNoOtherStreamDecodingTheContractsOrderApplies() {
		Evidence evidence = withPeers(0, 0, 0, 0, new long[] { 3, 9000 }, sample(900, 4, 0, 0.95, 10, 0),
				sample(1400, 12, 5, 0.99, 11, 5000));
		CauseRules.Verdict verdict = CauseRules.verdict(LATE, evidence, PROPERTIES);
		assertThat(verdict.cause()).isEqualTo(SpikeCause.PREEMPTION);
		assertThat(verdict.scope()).isEqualTo(SpikeScope.ALONE);
	}

	@Test
	void eventsThatFollowTheGapInABurstWereHeldUpAfterTheEngine() {
		Evidence base = withPeers(6, 5, 0, 0, NONE, sample(900, 7, 1, 0.99, 10, 0), sample(1400, 6, 2, 0.99, 12, 0));
		Evidence held = withPeers(6, 5, 0, 0, 29, NONE, sample(900, 7, 1, 0.99, 10, 0),
				sample(1400, 6, 2, 0.99, 12, 0));
		CauseRules.Verdict verdict = CauseRules.verdict(LATE, held, PROPERTIES);
		assertThat(verdict.cause()).isEqualTo(SpikeCause.ENGINE_OTHER);
		assertThat(verdict.scope()).isEqualTo(SpikeScope.AFTER_ENGINE);
		assertThat(CauseRules.decide(LATE, base, PROPERTIES)).as("without the burst: its own preemption")
			.isEqualTo(SpikeCause.PREEMPTION);
	}

}
