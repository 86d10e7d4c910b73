package dev.tokengap.sim;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import org.awaitility.core.ConditionFactory;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.Disposable;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import dev.tokengap.testsupport.StreamingClient;

import static dev.tokengap.sim.FastSimulator.CHAT;
import static dev.tokengap.sim.FastSimulator.chatBody;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

class SimEngineTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(20);

	@Test
	void moreRunningSequencesMakeLongerSteps() {
		SimulatorProperties properties = FastSimulator.properties()
			.stepFixedCost(Duration.ofMillis(2))
			.stepCostPerSeq(Duration.ofMillis(2))
			.build();
		try (SimulatorServer server = FastSimulator.start(properties)) {
			StreamingClient client = FastSimulator.client(server);
			double alone = meanGapNanos(List.of(stream(client, "alone", 20)));
			List<List<StreamingClient.Event>> crowd = Flux
				.merge(IntStream.range(0, 16).mapToObj((i) -> streamLater(client, "crowd-" + i, 20)).toList())
				.collectList()
				.block(TIMEOUT);
			assertThat(meanGapNanos(crowd)).isGreaterThan(2 * alone);
			assertThat(server.engine().trace()).extracting(TraceEntry::batchSize).contains(16);
		}
	}

	@Test
	void aLongPromptWithoutChunkedPrefillStallsTheOtherStreamsAndTheTraceSaysWhy() {
		SimulatorProperties properties = FastSimulator.properties()
			.chunkedPrefill(false)
			.stepCostPerPrefillToken(Duration.ofNanos(25_000))
			.build();
		try (SimulatorServer server = FastSimulator.start(properties)) {
			StreamingClient client = FastSimulator.client(server);
			List<StreamingClient.Event> background = runBesideALongPrompt(server, client);
			TraceEntry hit = server.engine()
				.trace("background")
				.stream()
				.filter((entry) -> entry.prefillTokensFromOthers() == 4000)
				.findFirst()
				.orElseThrow();
			assertThat(hit.sincePreviousTokenNanos()).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(100));
			assertThat(hit.batchSize()).isEqualTo(2);
			assertThat(hit.preempted()).isFalse();
			assertThat(server.engine().trace("long").get(0).stepId()).isEqualTo(hit.stepId());
			List<Long> gaps = gaps(contentEvents(background));
			assertThat(gaps.stream().max(Long::compare).orElseThrow())
				.isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(90));
			assertThat(median(gaps)).isLessThan(TimeUnit.MILLISECONDS.toNanos(30));
		}
	}

	@Test
	void withChunkedPrefillALongPromptIsSpreadOverStepsWithinTheBudget() {
		SimulatorProperties properties = FastSimulator.properties()
			.stepCostPerPrefillToken(Duration.ofNanos(25_000))
			.build();
		try (SimulatorServer server = FastSimulator.start(properties)) {
			runBesideALongPrompt(server, FastSimulator.client(server));
			List<TraceEntry> interfered = server.engine()
				.trace("background")
				.stream()
				.filter((entry) -> entry.prefillTokensFromOthers() > 0)
				.toList();
			assertThat(interfered).hasSizeGreaterThanOrEqualTo(2);
			assertThat(interfered).allSatisfy((entry) -> assertThat(entry.prefillTokensFromOthers()).isLessThan(2048));
			assertThat(interfered.stream().mapToInt(TraceEntry::prefillTokensFromOthers).sum()).isEqualTo(4000);
		}
	}

	/**
	 * A background stream that sees a 4000-token prompt arrive after its tenth token; its
	 * events up to ten tokens after the long prompt's completion.
	 */
	private static List<StreamingClient.Event> runBesideALongPrompt(SimulatorServer server, StreamingClient client) {
		List<StreamingClient.Event> background = new CopyOnWriteArrayList<>();
		Disposable stream = client.stream(CHAT, chatBody("keep streaming", 5000), Map.of("X-Request-Id", "background"))
			.subscribe(background::add);
		try {
			await().atMost(Duration.ofSeconds(5)).until(() -> server.engine().trace("background").size() >= 10);
			assertThat(client.post(CHAT, chatBody("x".repeat(4 * 4000), 2, false, ""), Map.of("X-Request-Id", "long"))
				.status()).isEqualTo(200);
			int produced = server.engine().trace("background").size();
			await().atMost(Duration.ofSeconds(5)).until(() -> contentEvents(background).size() >= produced + 10);
			return List.copyOf(background);
		}
		finally {
			stream.dispose();
		}
	}

	@Test
	void aKvCacheTooSmallPreemptsAndThePreemptedStreamShowsALongGap() {
		SimulatorProperties properties = FastSimulator.properties()
			.blockSize(16)
			.numKvBlocks(24)
			.maxModelLen(384)
			.build();
		try (SimulatorServer server = FastSimulator.start(properties)) {
			StreamingClient client = FastSimulator.client(server);
			List<List<StreamingClient.Event>> streams = Flux
				.merge(IntStream.range(0, 4)
					.mapToObj((i) -> streamLater(client, "kv-" + i, 100, "prompt " + i + " " + "y".repeat(248)))
					.toList())
				.collectList()
				.block(TIMEOUT);
			assertThat(streams).allSatisfy((events) -> assertThat(contentEvents(events)).hasSize(100));
			assertThat(server.engine().preemptions()).isPositive();
			String metrics = FastSimulator.client(server).get("/metrics").body();
			assertThat(metrics)
				.containsPattern("vllm:num_preemptions_total\\{engine=\"0\",model_name=\"sim-llama-3-8b\"} [1-9]");
			// Every preempted request has finished: the per-request histogram holds
			// all four, and its sum every preemption.
			assertThat(metrics)
				.contains("vllm:request_num_preemptions_count{engine=\"0\",model_name=\"sim-llama-3-8b\"} 4.0\n")
				.contains("vllm:request_num_preemptions_sum{engine=\"0\",model_name=\"sim-llama-3-8b\"} "
						+ (double) server.engine().preemptions() + "\n");
			TraceEntry preempted = server.engine()
				.trace()
				.stream()
				.filter(TraceEntry::preempted)
				.max(Comparator.comparingLong(TraceEntry::sincePreviousTokenNanos))
				.orElseThrow();
			long typicalStep = median(server.engine().trace().stream().map(TraceEntry::stepDurationNanos).toList());
			assertThat(preempted.sincePreviousTokenNanos()).isGreaterThan(5 * typicalStep);
			assertThat(server.engine().kvCacheUsage()).isZero();
		}
	}

	@Test
	void aClientThatDisconnectsIsAbortedWithin100Milliseconds() {
		try (SimulatorServer server = FastSimulator.start()) {
			StreamingClient client = FastSimulator.client(server);
			client.stream(CHAT, chatBody("hi", 1000), Map.of())
				.take(4)
				.doOnNext((event) -> assertThat(server.engine().running()).isEqualTo(1))
				.blockLast(TIMEOUT);
			within100Milliseconds().until(() -> server.engine().running() == 0);
			assertThat(server.engine().kvCacheUsage()).isZero();
		}
	}

	@Test
	void aWaitingClientThatDisconnectsLeavesTheQueue() {
		try (SimulatorServer server = FastSimulator.start(FastSimulator.properties().maxNumSeqs(1).build())) {
			StreamingClient client = FastSimulator.client(server);
			Disposable first = client.stream(CHAT, chatBody("first", 1000), Map.of()).subscribe();
			await().atMost(Duration.ofSeconds(5)).until(() -> server.engine().running() == 1);
			Disposable second = client.stream(CHAT, chatBody("second", 10), Map.of()).subscribe();
			await().atMost(Duration.ofSeconds(5)).until(() -> server.engine().waiting() == 1);
			second.dispose();
			within100Milliseconds().until(() -> server.engine().waiting() == 0);
			first.dispose();
			within100Milliseconds().until(() -> server.engine().running() == 0);
		}
	}

	@Test
	void aClientThatDoesNotReadNeverHoldsUpTheEngine() {
		try (SimulatorServer server = FastSimulator.start()) {
			StreamingClient client = FastSimulator.client(server);
			StalledReader stalled = new StalledReader();
			client.stream(CHAT, chatBody("slow reader", 300), Map.of("X-Request-Id", "slow")).subscribe(stalled);
			List<StreamingClient.Event> other = stream(client, "other", 30);
			assertThat(contentEvents(other)).hasSize(30);
			await().atMost(Duration.ofSeconds(5)).until(() -> server.engine().trace("slow").size() == 300);
			assertThat(stalled.received).isEqualTo(1);
			stalled.dispose();
		}
	}

	@Test
	void aFullWaitingQueueRefusesNewRequestsWith503AndCountsThemNowhere() {
		SimulatorProperties properties = FastSimulator.properties().maxNumSeqs(1).maxNumQueuedReqs(2).build();
		try (SimulatorServer server = FastSimulator.start(properties)) {
			StreamingClient client = FastSimulator.client(server);
			Disposable running = client.stream(CHAT, chatBody("running", 1000), Map.of()).subscribe();
			await().atMost(Duration.ofSeconds(5)).until(() -> server.engine().running() == 1);
			Disposable first = client.stream(CHAT, chatBody("waiting 1", 10), Map.of()).subscribe();
			Disposable second = client.stream(CHAT, chatBody("waiting 2", 10), Map.of()).subscribe();
			await().atMost(Duration.ofSeconds(5)).until(() -> server.engine().waiting() == 2);
			for (boolean stream : List.of(true, false)) {
				StreamingClient.Exchange refused = client.post(CHAT, chatBody("refused", 10, stream, ""));
				assertThat(refused.status()).isEqualTo(503);
				assertThat(refused.json().path("error").path("type").asString()).isEqualTo("ServiceUnavailableError");
				assertThat(refused.json().path("error").path("code").asInt()).isEqualTo(503);
				assertThat(refused.json().path("error").path("message").asString()).contains("max_num_queued_reqs=2");
			}
			assertThat(server.engine().waiting()).isEqualTo(2);
			assertThat(server.engine().running()).isEqualTo(1);
			first.dispose();
			within100Milliseconds().until(() -> server.engine().waiting() == 1);
			Disposable third = client.stream(CHAT, chatBody("waiting 3", 10), Map.of()).subscribe();
			await().atMost(Duration.ofSeconds(5)).until(() -> server.engine().waiting() == 2);
			assertThat(client.get("/metrics").body())
				.doesNotContainPattern("vllm:request_success_total\\{[^}]*} [1-9]");
			List.of(running, second, third).forEach(Disposable::dispose);
		}
	}

	@Test
	void withoutALimitTheWaitingQueueGrowsAsVllmsDoesByDefault() {
		try (SimulatorServer server = FastSimulator.start(FastSimulator.properties().maxNumSeqs(1).build())) {
			StreamingClient client = FastSimulator.client(server);
			List<Disposable> streams = IntStream.range(0, 6)
				.mapToObj((i) -> client.stream(CHAT, chatBody("queued " + i, 1000), Map.of()).subscribe())
				.toList();
			await().atMost(Duration.ofSeconds(5)).until(() -> server.engine().waiting() == 5);
			streams.forEach(Disposable::dispose);
		}
	}

	@Test
	void aRepeatedLongPromptIsServedFromThePrefixCacheAndCostsAlmostNoPrefill() {
		SimulatorProperties properties = FastSimulator.properties()
			.chunkedPrefill(false)
			.stepCostPerPrefillToken(Duration.ofNanos(25_000))
			.build();
		try (SimulatorServer server = FastSimulator.start(properties)) {
			StreamingClient client = FastSimulator.client(server);
			String prompt = "x".repeat(4 * 4000);
			assertThat(client.post(CHAT, chatBody(prompt, 2, false, ""), Map.of("X-Request-Id", "long-1")).status())
				.isEqualTo(200);
			assertThat(client.post(CHAT, chatBody(prompt, 2, false, ""), Map.of("X-Request-Id", "long-2")).status())
				.isEqualTo(200);
			TraceEntry computed = server.engine().trace("long-1").get(0);
			TraceEntry cached = server.engine().trace("long-2").get(0);
			assertThat(computed.cachedPromptTokens()).isZero();
			assertThat(cached.cachedPromptTokens()).as("all full blocks but the one with the last token")
				.isEqualTo(3984);
			assertThat(computed.stepDurationNanos()).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(100));
			assertThat(cached.stepDurationNanos()).isLessThan(computed.stepDurationNanos() / 10);
		}
	}

	@Test
	void withPrefixCachingOffARepeatedPromptIsPrefilledAgain() {
		try (SimulatorServer server = FastSimulator.start(FastSimulator.properties().prefixCaching(false).build())) {
			StreamingClient client = FastSimulator.client(server);
			for (String id : List.of("again-1", "again-2")) {
				client.post(CHAT, chatBody("z".repeat(4 * 500), 2, false, ""), Map.of("X-Request-Id", id));
			}
			assertThat(server.engine().trace("again-2").get(0).cachedPromptTokens()).isZero();
		}
	}

	private static ConditionFactory within100Milliseconds() {
		return await().pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(2)).atMost(Duration.ofMillis(100));
	}

	private static List<StreamingClient.Event> stream(StreamingClient client, String id, int maxTokens) {
		return streamLater(client, id, maxTokens).block(TIMEOUT);
	}

	private static Mono<List<StreamingClient.Event>> streamLater(StreamingClient client, String id, int maxTokens) {
		return streamLater(client, id, maxTokens, "hello from " + id);
	}

	private static Mono<List<StreamingClient.Event>> streamLater(StreamingClient client, String id, int maxTokens,
			String prompt) {
		return client.stream(CHAT, chatBody(prompt, maxTokens), Map.of("X-Request-Id", id))
			.collectList()
			.subscribeOn(Schedulers.boundedElastic());
	}

	static List<StreamingClient.Event> contentEvents(List<StreamingClient.Event> events) {
		return events.stream().filter((event) -> !event.done() && !event.content().isEmpty()).toList();
	}

	static List<Long> gaps(List<StreamingClient.Event> events) {
		List<Long> gaps = new ArrayList<>();
		for (int i = 1; i < events.size(); i++) {
			gaps.add(events.get(i).nanos() - events.get(i - 1).nanos());
		}
		return gaps;
	}

	private static double meanGapNanos(List<List<StreamingClient.Event>> streams) {
		return streams.stream()
			.flatMap((events) -> gaps(contentEvents(events)).stream())
			.mapToLong(Long::longValue)
			.average()
			.orElseThrow();
	}

	static long median(List<Long> values) {
		List<Long> sorted = values.stream().sorted().toList();
		return sorted.get(sorted.size() / 2);
	}

	/** Takes one event and then reads no more. */
	private static final class StalledReader extends BaseSubscriber<StreamingClient.Event> {

		private volatile int received;

		@Override
		protected void hookOnSubscribe(Subscription subscription) {
			subscription.request(1);
		}

		@Override
		protected void hookOnNext(StreamingClient.Event event) {
			this.received++;
		}

		@Override
		protected void hookOnError(Throwable throwable) {
			// the server goes away at the end of the test
		}

	}

}
