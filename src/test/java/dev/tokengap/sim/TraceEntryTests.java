package dev.tokengap.sim;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import tools.jackson.databind.JsonNode;

import dev.tokengap.testsupport.StreamingClient;

import static dev.tokengap.sim.FastSimulator.CHAT;
import static dev.tokengap.sim.FastSimulator.chatBody;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The trace tells a late token's causes apart: other requests' new prompts from their
 * recompute after a preemption, the request's own recompute, an engine stall of the step
 * itself, and what each part of the step cost.
 */
class TraceEntryTests {

	private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

	private static final long PER_SEQ = 100_000;

	private static final long PER_PREFILL_TOKEN = 10_000;

	private static final SimulatorProperties PROPERTIES = SimulatorProperties.defaults()
		.toBuilder()
		.blockSize(16)
		.numKvBlocks(6)
		.maxModelLen(64)
		.maxNumBatchedTokens(512)
		.stepFixedCost(Duration.ofMillis(1))
		.stepCostPerSeq(Duration.ofNanos(PER_SEQ))
		.stepCostPerPrefillToken(Duration.ofNanos(PER_PREFILL_TOKEN))
		.build();

	private final StepScheduler scheduler = new StepScheduler(PROPERTIES);

	private final TokenTrace trace = new TokenTrace(1000);

	private final StepCompletion completion = new StepCompletion(PROPERTIES, this.scheduler, new VllmMetrics(),
			this.trace, new Random(1));

	private long stepId;

	private long clock = 1_000 * MS;

	@Test
	void aRecomputeIsReportedAsRecomputeToTheOthersInItsStepAndAsItsOwnToTheVictim() {
		SimSequence a = sequence("a", 32);
		SimSequence b = sequence("b", 32);
		SimSequence c = sequence("c", 32);
		List.of(a, b, c).forEach(this.scheduler::enqueue);
		step();
		// a's 33rd token needs a third block and none is free: c, admitted last, goes.
		StepPlan preempting = step();
		assertThat(preempting.scheduled()).extracting(StepPlan.Scheduled::sequence).containsExactly(a, b);
		assertThat(c.state).isEqualTo(SimSequence.State.WAITING);
		this.scheduler.remove(b, SimSequence.State.FINISHED);
		StepPlan resumed = step();
		assertThat(resumed.recomputeTokens()).as("c's prompt and its one token again").isEqualTo(33);
		assertThat(resumed.newPrefillTokens()).isZero();
		TraceEntry bystander = entry("a", 2);
		assertThat(bystander.stepId()).isEqualTo(resumed.stepId);
		assertThat(bystander.recomputeTokensFromOthers()).isEqualTo(33);
		assertThat(bystander.newPrefillTokensFromOthers()).isZero();
		assertThat(bystander.prefillTokensFromOthers()).isEqualTo(33);
		assertThat(bystander.ownRecomputeTokens()).isZero();
		assertThat(bystander.preempted()).isFalse();
		TraceEntry victim = entry("c", 1);
		assertThat(victim.stepId()).isEqualTo(resumed.stepId);
		assertThat(victim.preempted()).isTrue();
		assertThat(victim.ownRecomputeTokens()).isEqualTo(33);
		assertThat(victim.recomputeTokensFromOthers()).isZero();
		assertThat(victim.prefillTokensFromOthers()).isZero();
		for (TraceEntry entry : List.of(bystander, victim)) {
			assertThat(entry.recomputeCostNanos()).as("everyone's recompute, the victim's included")
				.isEqualTo(33 * PER_PREFILL_TOKEN);
			assertThat(entry.newPrefillCostNanos()).isZero();
			assertThat(entry.running()).isEqualTo(2);
		}
		step();
		assertThat(entry("c", 2).preempted()).as("its recompute gave it its token").isFalse();
		assertThat(entry("c", 2).ownRecomputeTokens()).isZero();
		assertThat(entry("a", 3).recomputeTokensFromOthers()).isZero();
		assertThat(this.trace.entries(null)).allSatisfy(TraceEntryTests::costAddsUp);
	}

	@Test
	void aNewPromptsPrefillIsReportedAsNewPrefill() {
		SimSequence a = sequence("a", 16);
		this.scheduler.enqueue(a);
		step();
		SimSequence d = sequence("d", 40);
		this.scheduler.enqueue(d);
		StepPlan plan = step();
		TraceEntry decoding = entry("a", 1);
		assertThat(decoding.newPrefillTokensFromOthers()).isEqualTo(40);
		assertThat(decoding.recomputeTokensFromOthers()).isZero();
		assertThat(decoding.prefillTokensFromOthers()).isEqualTo(40);
		TraceEntry first = entry("d", 0);
		assertThat(first.stepId()).isEqualTo(plan.stepId);
		assertThat(first.newPrefillTokensFromOthers()).as("its own prefill is not another's").isZero();
		assertThat(first.ownRecomputeTokens()).isZero();
		assertThat(first.preempted()).isFalse();
		for (TraceEntry entry : List.of(decoding, first)) {
			assertThat(entry.newPrefillCostNanos()).isEqualTo(40 * PER_PREFILL_TOKEN);
			assertThat(entry.recomputeCostNanos()).isZero();
			assertThat(entry.fixedCostNanos()).isEqualTo(MS + 2 * PER_SEQ);
			assertThat(entry.batchSize()).isEqualTo(2);
			assertThat(entry.running()).isEqualTo(2);
			assertThat(entry.engineWideStall()).isFalse();
		}
		assertThat(this.trace.entries(null)).allSatisfy(TraceEntryTests::costAddsUp);
	}

	@Test
	void anEngineStallMarksEveryTokenOfItsStepNotOnlyTheStalledRequests() {
		SimSequence stalled = new SimSequence("stalled", null, 8, 10, new TokenVocabulary(1).textsFor(""),
				new int[] { 1 }, new long[] { 50 * MS });
		SimSequence bystander = sequence("bystander", 8);
		this.scheduler.enqueue(stalled);
		this.scheduler.enqueue(bystander);
		step();
		StepPlan stalledStep = step();
		step();
		for (String id : List.of("stalled", "bystander")) {
			TraceEntry before = entry(id, 0);
			TraceEntry hit = entry(id, 1);
			TraceEntry after = entry(id, 2);
			assertThat(hit.stepId()).isEqualTo(stalledStep.stepId);
			assertThat(hit.stepStallNanos()).isEqualTo(50 * MS);
			assertThat(hit.engineWideStall()).isTrue();
			assertThat(hit.injectedStall()).isTrue();
			assertThat(hit.stepDurationNanos()).isEqualTo(hit.fixedCostNanos() + 50 * MS);
			for (TraceEntry calm : List.of(before, after)) {
				assertThat(calm.stepStallNanos()).isZero();
				assertThat(calm.engineWideStall()).isFalse();
				assertThat(calm.injectedStall()).isFalse();
			}
		}
		assertThat(this.trace.entries(null)).allSatisfy(TraceEntryTests::costAddsUp);
	}

	@Test
	void theTraceJsonCarriesTheCausesAndTheRealStepsCostAtLeastTheirParts() {
		try (SimulatorServer server = FastSimulator.start()) {
			StreamingClient client = FastSimulator.client(server);
			Disposable bystander = client.stream(CHAT, chatBody("bystander", 5000), Map.of("X-Request-Id", "bystander"))
				.subscribe();
			try {
				await().atMost(Duration.ofSeconds(5)).until(() -> server.engine().trace("bystander").size() >= 3);
				client.post(CHAT, chatBody("stall me", 10),
						Map.of(FaultHeaders.ENGINE_STALL, "5:200", "X-Request-Id", "stalled"));
			}
			finally {
				bystander.dispose();
			}
			JsonNode trace = client.get("/sim/trace").json();
			long stalledStep = entry(trace, "stalled", 5).path("stepId").longValue();
			int marked = 0;
			for (JsonNode entry : trace) {
				boolean inStalledStep = entry.path("stepId").longValue() == stalledStep;
				assertThat(entry.path("stepStallNanos").longValue()).isEqualTo(inStalledStep ? 200 * MS : 0);
				assertThat(entry.path("engineWideStall").booleanValue()).isEqualTo(inStalledStep);
				marked += inStalledStep ? 1 : 0;
				long parts = entry.path("fixedCostNanos").longValue() + entry.path("newPrefillCostNanos").longValue()
						+ entry.path("recomputeCostNanos").longValue() + entry.path("stepStallNanos").longValue();
				assertThat(entry.path("stepDurationNanos").longValue()).isGreaterThanOrEqualTo(parts);
				assertThat(entry.path("prefillTokensFromOthers").intValue())
					.isEqualTo(entry.path("newPrefillTokensFromOthers").intValue()
							+ entry.path("recomputeTokensFromOthers").intValue());
			}
			assertThat(marked).as("the stalled request's token and the bystander's").isEqualTo(2);
		}
	}

	private static void costAddsUp(TraceEntry entry) {
		assertThat(entry.fixedCostNanos() + entry.newPrefillCostNanos() + entry.recomputeCostNanos()
				+ entry.stepStallNanos())
			.isEqualTo(entry.stepDurationNanos());
		assertThat(entry.fixedCostNanos()).isEqualTo(MS + PER_SEQ * entry.batchSize());
		assertThat(entry.prefillTokensFromOthers())
			.isEqualTo(entry.newPrefillTokensFromOthers() + entry.recomputeTokensFromOthers());
	}

	/** Schedules and completes one step that lasts exactly its cost. */
	private StepPlan step() {
		StepPlan plan = this.scheduler.schedule(++this.stepId);
		long start = this.clock;
		this.clock += plan.costNanos(PROPERTIES);
		this.completion.complete(plan, new StepCompletion.Timing(start, this.clock, this.clock / MS));
		return plan;
	}

	private TraceEntry entry(String requestId, int tokenIndex) {
		return this.trace.entries(requestId)
			.stream()
			.filter((entry) -> entry.tokenIndex() == tokenIndex)
			.findFirst()
			.orElseThrow();
	}

	private static JsonNode entry(JsonNode trace, String requestId, int tokenIndex) {
		for (JsonNode entry : trace) {
			if (requestId.equals(entry.path("requestId").stringValue())
					&& entry.path("tokenIndex").intValue() == tokenIndex) {
				return entry;
			}
		}
		throw new AssertionError("no token " + tokenIndex + " of " + requestId);
	}

	private static SimSequence sequence(String id, int promptTokens) {
		return new SimSequence(id, null, promptTokens, 100, new TokenVocabulary(1).textsFor(id), new int[0],
				new long[0]);
	}

}
