package dev.tokengap.sim;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class StepSchedulerTests {

	private static final SimulatorProperties SMALL = SimulatorProperties.defaults()
		.toBuilder()
		.maxNumBatchedTokens(64)
		.blockSize(16)
		.numKvBlocks(64)
		.maxModelLen(512)
		.stepFixedCost(Duration.ofMillis(1))
		.build();

	private long stepId;

	@Test
	void decodesShareTheBudgetWithAChunkedPrefill() {
		StepScheduler scheduler = new StepScheduler(SMALL);
		List<SimSequence> decoding = List.of(sequence(8), sequence(8), sequence(8));
		decoding.forEach(scheduler::enqueue);
		complete(scheduler, scheduler.schedule(++this.stepId));
		SimSequence longPrompt = sequence(100);
		scheduler.enqueue(longPrompt);
		StepPlan first = scheduler.schedule(++this.stepId);
		assertThat(first.batchSize()).isEqualTo(4);
		assertThat(first.totalTokens()).isEqualTo(64);
		assertThat(first.prefillTokens()).isEqualTo(61);
		complete(scheduler, first);
		StepPlan second = scheduler.schedule(++this.stepId);
		assertThat(second.prefillTokens()).isEqualTo(39);
		assertThat(tokensOf(second, longPrompt)).isEqualTo(39);
		assertThat(producesToken(second, longPrompt)).isTrue();
	}

	@Test
	void withoutChunkingALongPromptIsPrefilledWholeInOneStepBesideTheDecodes() {
		StepScheduler scheduler = new StepScheduler(SMALL.toBuilder().chunkedPrefill(false).build());
		scheduler.enqueue(sequence(8));
		complete(scheduler, scheduler.schedule(++this.stepId));
		SimSequence longPrompt = sequence(200);
		scheduler.enqueue(longPrompt);
		StepPlan plan = scheduler.schedule(++this.stepId);
		assertThat(plan.batchSize()).isEqualTo(2);
		assertThat(plan.prefillTokens()).isEqualTo(200);
		assertThat(producesToken(plan, longPrompt)).isTrue();
	}

	@Test
	void withoutChunkingAnOverBudgetPromptIsTheOnlyPrefillOfItsStep() {
		StepScheduler scheduler = new StepScheduler(SMALL.toBuilder().chunkedPrefill(false).build());
		SimSequence first = sequence(100);
		SimSequence second = sequence(100);
		scheduler.enqueue(first);
		scheduler.enqueue(second);
		StepPlan plan = scheduler.schedule(++this.stepId);
		assertThat(plan.scheduled()).extracting(StepPlan.Scheduled::sequence).containsExactly(first);
		assertThat(scheduler.waitingCount()).isEqualTo(1);
	}

	@Test
	void runningSetIsCappedByMaxNumSeqs() {
		StepScheduler scheduler = new StepScheduler(SMALL.toBuilder().maxNumSeqs(2).build());
		for (int i = 0; i < 5; i++) {
			scheduler.enqueue(sequence(4));
		}
		scheduler.schedule(++this.stepId);
		assertThat(scheduler.runningCount()).isEqualTo(2);
		assertThat(scheduler.waitingCount()).isEqualTo(3);
	}

	@Test
	void admissionWaitsUntilThePromptsBlocksAreFree() {
		StepScheduler scheduler = new StepScheduler(
				SMALL.toBuilder().numKvBlocks(4).maxModelLen(64).maxNumBatchedTokens(256).build());
		scheduler.enqueue(sequence(48));
		scheduler.enqueue(sequence(32));
		scheduler.schedule(++this.stepId);
		assertThat(scheduler.runningCount()).isEqualTo(1);
		assertThat(scheduler.waitingCount()).isEqualTo(1);
		assertThat(scheduler.pool().freeBlocks()).isEqualTo(1);
	}

	@Test
	void aSequenceNeedingABlockPreemptsTheMostRecentlyAdmittedByRecompute() {
		StepScheduler scheduler = new StepScheduler(SMALL.toBuilder().numKvBlocks(4).maxModelLen(64).build());
		SimSequence older = sequence(32);
		SimSequence newer = sequence(32);
		scheduler.enqueue(older);
		scheduler.enqueue(newer);
		complete(scheduler, scheduler.schedule(++this.stepId));
		assertThat(scheduler.pool().freeBlocks()).isZero();
		// older now holds 33 tokens and needs a third block: newer must go.
		StepPlan plan = scheduler.schedule(++this.stepId);
		assertThat(plan.scheduled()).extracting(StepPlan.Scheduled::sequence).containsExactly(older);
		assertThat(scheduler.preemptions()).isEqualTo(1);
		assertThat(newer.state).isEqualTo(SimSequence.State.WAITING);
		assertThat(newer.computed).isZero();
		assertThat(newer.preemptedSinceLastToken).isTrue();
		scheduler.remove(older, SimSequence.State.FINISHED);
		StepPlan resumed = scheduler.schedule(++this.stepId);
		assertThat(tokensOf(resumed, newer)).as("prompt and the generated token again").isEqualTo(33);
		assertThat(producesToken(resumed, newer)).isTrue();
	}

	@Test
	void anEngineStallLengthensTheStepThatProducesTheToken() {
		StepScheduler scheduler = new StepScheduler(SMALL);
		SimSequence stalled = new SimSequence("s", null, 8, 10, new TokenVocabulary(1).textsFor(""), new int[] { 1 },
				new long[] { Duration.ofMillis(50).toNanos() });
		scheduler.enqueue(stalled);
		StepPlan first = scheduler.schedule(++this.stepId);
		assertThat(first.injectedStall()).isFalse();
		complete(scheduler, first);
		StepPlan second = scheduler.schedule(++this.stepId);
		assertThat(second.injectedStall()).isTrue();
		assertThat(second.costNanos(SMALL)).isGreaterThanOrEqualTo(Duration.ofMillis(51).toNanos());
	}

	@Test
	void severalEngineStallsLengthenTheirOwnStepsOnly() {
		StepScheduler scheduler = new StepScheduler(SMALL);
		SimSequence stalled = new SimSequence("s", null, 8, 10, new TokenVocabulary(1).textsFor(""), new int[] { 1, 3 },
				new long[] { Duration.ofMillis(50).toNanos(), Duration.ofMillis(70).toNanos() });
		scheduler.enqueue(stalled);
		boolean[] injected = new boolean[5];
		for (int token = 0; token < 5; token++) {
			StepPlan plan = scheduler.schedule(++this.stepId);
			injected[token] = plan.injectedStall();
			complete(scheduler, plan);
		}
		assertThat(injected).containsExactly(false, true, false, true, false);
	}

	@Test
	void engineStallsAreListedInIncreasingTokenOrder() {
		io.netty.handler.codec.http.HttpHeaders headers = new io.netty.handler.codec.http.DefaultHttpHeaders();
		headers.set(FaultHeaders.ENGINE_STALL, "1:10, 3:20");
		FaultHeaders faults = FaultHeaders.from(headers);
		assertThat(faults.engineStallTokens()).containsExactly(1, 3);
		assertThat(faults.engineStallNanos()).containsExactly(10_000_000L, 20_000_000L);
		headers.set(FaultHeaders.ENGINE_STALL, "3:10,1:10");
		assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> FaultHeaders.from(headers)))
			.isInstanceOf(InvalidRequestException.class)
			.hasMessageContaining("increasing order");
	}

	@Test
	void theDraftsAcceptedWithATokenAreDecodedNextStepNotPrefilled() {
		StepScheduler scheduler = new StepScheduler(SMALL);
		SimSequence drafting = sequence(8);
		scheduler.enqueue(drafting);
		complete(scheduler, scheduler.schedule(++this.stepId));
		StepPlan decode = scheduler.schedule(++this.stepId);
		complete(scheduler, decode);
		// As StepCompletion with speculative decoding: the token and two accepted drafts.
		drafting.generated += 2;
		StepPlan next = scheduler.schedule(++this.stepId);
		assertThat(tokensOf(next, drafting)).as("the three outputs not yet fed back").isEqualTo(3);
		assertThat(next.scheduled()).noneMatch(StepPlan.Scheduled::prefill);
		assertThat(next.prefillTokens()).isZero();
	}

	@Test
	void abortFreesTheBlocksAtOnce() {
		StepScheduler scheduler = new StepScheduler(SMALL);
		SimSequence sequence = sequence(40);
		scheduler.enqueue(sequence);
		scheduler.schedule(++this.stepId);
		assertThat(scheduler.pool().freeBlocks()).isEqualTo(61);
		scheduler.remove(sequence, SimSequence.State.ABORTED);
		assertThat(scheduler.runningCount()).isZero();
		assertThat(scheduler.pool().freeBlocks()).isEqualTo(64);
	}

	@Test
	void aRepeatedPromptPrefillsOnlyWhatThePrefixCacheLacksAndAlwaysItsLastToken() {
		StepScheduler scheduler = new StepScheduler(SMALL.toBuilder().maxNumBatchedTokens(512).build());
		SimSequence first = prompted("a".repeat(4 * 100), 100);
		scheduler.enqueue(first);
		complete(scheduler, scheduler.schedule(++this.stepId));
		assertThat(scheduler.prefixCache().size()).as("6 full blocks of 16").isEqualTo(6);
		SimSequence again = prompted("a".repeat(4 * 100), 100);
		scheduler.enqueue(again);
		StepPlan plan = scheduler.schedule(++this.stepId);
		assertThat(tokensOf(plan, again)).isEqualTo(100 - 96);
		assertThat(plan.prefillTokens()).isEqualTo(4);
		assertThat(again.cachedPromptTokens).isEqualTo(96);
		assertThat(again.blocks).as("a hit still takes its own blocks").isEqualTo(7);
		complete(scheduler, plan);
		SimSequence exact = prompted("b".repeat(4 * 32), 32);
		scheduler.enqueue(exact);
		complete(scheduler, scheduler.schedule(++this.stepId));
		SimSequence exactAgain = prompted("b".repeat(4 * 32), 32);
		scheduler.enqueue(exactAgain);
		StepPlan full = scheduler.schedule(++this.stepId);
		assertThat(tokensOf(full, exactAgain)).as("the last block again, for the last token's logits").isEqualTo(16);
	}

	@Test
	void promptsShareTheCachedBlocksOfTheirCommonPrefixOnly() {
		StepScheduler scheduler = new StepScheduler(SMALL.toBuilder().maxNumBatchedTokens(512).build());
		String system = "s".repeat(4 * 48);
		scheduler.enqueue(prompted(system + "q".repeat(4 * 40), 88));
		complete(scheduler, scheduler.schedule(++this.stepId));
		SimSequence other = prompted(system + "r".repeat(4 * 40), 88);
		scheduler.enqueue(other);
		StepPlan plan = scheduler.schedule(++this.stepId);
		assertThat(other.cachedPromptTokens).isEqualTo(48);
		assertThat(tokensOf(plan, other)).isEqualTo(40);
	}

	@Test
	void withoutPrefixCachingEveryPromptIsPrefilledWhole() {
		StepScheduler scheduler = new StepScheduler(
				SMALL.toBuilder().prefixCaching(false).maxNumBatchedTokens(512).build());
		scheduler.enqueue(prompted("a".repeat(400), 100));
		complete(scheduler, scheduler.schedule(++this.stepId));
		SimSequence again = prompted("a".repeat(400), 100);
		scheduler.enqueue(again);
		assertThat(tokensOf(scheduler.schedule(++this.stepId), again)).isEqualTo(100);
		assertThat(again.cachedPromptTokens).isZero();
		assertThat(scheduler.prefixCache().size()).isZero();
	}

	@Test
	void aPreemptedSequenceRecomputesOnlyWhatThePrefixCacheLacks() {
		StepScheduler scheduler = new StepScheduler(SMALL.toBuilder().numKvBlocks(4).maxModelLen(64).build());
		SimSequence older = prompted("o".repeat(4 * 32), 32);
		SimSequence newer = prompted("n".repeat(4 * 32), 32);
		scheduler.enqueue(older);
		scheduler.enqueue(newer);
		complete(scheduler, scheduler.schedule(++this.stepId));
		scheduler.schedule(++this.stepId);
		assertThat(newer.state).isEqualTo(SimSequence.State.WAITING);
		scheduler.remove(older, SimSequence.State.FINISHED);
		StepPlan resumed = scheduler.schedule(++this.stepId);
		assertThat(tokensOf(resumed, newer)).as("the generated token only; the prompt's 2 blocks are cached")
			.isEqualTo(1);
		assertThat(newer.cachedPromptTokens).as("as first scheduled").isZero();
	}

	@Test
	void thePrefixCacheForgetsTheLeastRecentlyUsedBlocksFirst() {
		PrefixCache cache = new PrefixCache(true, 16, 4);
		SimSequence a = prompted("a".repeat(4 * 33), 33);
		SimSequence b = prompted("b".repeat(4 * 33), 33);
		a.computed = 33;
		b.computed = 33;
		cache.computed(a);
		cache.computed(b);
		assertThat(cache.size()).isEqualTo(4);
		assertThat(cache.cachedTokens(prompted("a".repeat(4 * 33), 33))).isEqualTo(32);
		cache.touch(a, 32);
		SimSequence c = prompted("c".repeat(4 * 17), 17);
		c.computed = 17;
		cache.computed(c);
		assertThat(cache.cachedTokens(prompted("a".repeat(4 * 33), 33))).isEqualTo(32);
		assertThat(cache.cachedTokens(prompted("b".repeat(4 * 33), 33))).as("b's first block went").isZero();
	}

	private static SimSequence prompted(String text, int promptTokens) {
		return new SimSequence("r", text, promptTokens, 100, new TokenVocabulary(1).textsFor(text), new int[0],
				new long[0]);
	}

	private static SimSequence sequence(int promptTokens) {
		return new SimSequence("r", null, promptTokens, 100, new TokenVocabulary(1).textsFor(""), new int[0],
				new long[0]);
	}

	/** What the engine does at a step's end, minus the emitting. */
	private static void complete(StepScheduler scheduler, StepPlan plan) {
		for (StepPlan.Scheduled scheduled : plan.scheduled()) {
			boolean produces = scheduled.producesToken();
			scheduled.sequence().computed += scheduled.tokens();
			scheduler.prefixCache().computed(scheduled.sequence());
			if (produces) {
				scheduled.sequence().generated++;
				scheduled.sequence().preemptedSinceLastToken = false;
			}
		}
	}

	private static int tokensOf(StepPlan plan, SimSequence sequence) {
		return plan.scheduled().stream().filter((s) -> s.sequence() == sequence).findFirst().orElseThrow().tokens();
	}

	private static boolean producesToken(StepPlan plan, SimSequence sequence) {
		return plan.scheduled()
			.stream()
			.filter((s) -> s.sequence() == sequence)
			.findFirst()
			.orElseThrow()
			.producesToken();
	}

}
