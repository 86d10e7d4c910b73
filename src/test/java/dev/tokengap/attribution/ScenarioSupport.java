package dev.tokengap.attribution;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelOption;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;
import reactor.netty.ByteBufFlux;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;

import dev.tokengap.sim.SimulatorServer;
import dev.tokengap.sim.TraceEntry;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Drives the simulator through tokengap over real HTTP and compares each attributed spike
 * with the simulator's ground truth.
 */
abstract class ScenarioSupport {

	static final String MODEL = "sim-llama-3-8b";

	@LocalServerPort
	int port;

	@Autowired
	SimulatorServer simulator;

	@Autowired
	SpikeAttributor attributor;

	final Set<String> requestIds = ConcurrentHashMap.newKeySet();

	final AtomicInteger gaps = new AtomicInteger();

	/**
	 * One request's options. Its prompt starts with its id, so that no two prompts share
	 * a prefix-cache block, unless it asks for a shared prefix: then its first
	 * {@code sharedChars} characters are the same as every other such request's.
	 */
	record Request(String id, int promptChars, int maxTokens, Map<String, String> headers, int pauseAfterEvents,
			Duration pause, int sharedChars, boolean includeUsage) {

		static Request of(String id, int promptChars, int maxTokens) {
			return new Request(id, promptChars, maxTokens, Map.of(), -1, Duration.ZERO, 0, false);
		}

		Request with(String header, String value) {
			return new Request(this.id, this.promptChars, this.maxTokens, Map.of(header, value), this.pauseAfterEvents,
					this.pause, this.sharedChars, this.includeUsage);
		}

		Request pausingAfter(int events, Duration pause) {
			return new Request(this.id, this.promptChars, this.maxTokens, this.headers, events, pause, this.sharedChars,
					this.includeUsage);
		}

		Request sharingPrefix(int chars) {
			return new Request(this.id, this.promptChars, this.maxTokens, this.headers, this.pauseAfterEvents,
					this.pause, chars, this.includeUsage);
		}

		/**
		 * Asks for the final usage chunk ({@code stream_options.include_usage}), which
		 * carries vLLM's per-request metrics.
		 */
		Request withUsage() {
			return new Request(this.id, this.promptChars, this.maxTokens, this.headers, this.pauseAfterEvents,
					this.pause, this.sharedChars, true);
		}

		String prompt() {
			String shared = "s".repeat(Math.min(this.sharedChars, this.promptChars));
			String own = this.id + " " + "p".repeat(this.promptChars);
			return (shared + own).substring(0, this.promptChars);
		}

	}

	/**
	 * Runs a few unscored streams first: the first streams of a fresh JVM run while the
	 * JIT compiles the whole path, which is not what a scenario measures.
	 */
	void warmUp() {
		List<Mono<Void>> streams = new ArrayList<>();
		for (int i = 0; i < 4; i++) {
			streams.add(send(Request.of("warmup-" + i + "-" + System.nanoTime(), 40, 60)));
		}
		Mono.when(streams).block(Duration.ofSeconds(60));
	}

	/** Sends an unscored request and waits for its end, e.g. to fill the prefix cache. */
	void prime(Request request) {
		send(request).block(Duration.ofSeconds(60));
	}

	/**
	 * Starts a scored streamed chat completion; the Mono completes when the stream has
	 * ended.
	 */
	Mono<Void> start(Request request) {
		this.requestIds.add(request.id());
		this.gaps.addAndGet(Math.max(0, request.maxTokens() - 1));
		return send(request);
	}

	/**
	 * Starts a streamed chat completion straight at the simulator, past tokengap: load on
	 * the engine that tokengap does not see (another client of the engine).
	 */
	Mono<Void> startPastTokengap(Request request) {
		return send(request, this.simulator.baseUrl());
	}

	private Mono<Void> send(Request request) {
		return send(request, "http://127.0.0.1:" + this.port);
	}

	private Mono<Void> send(Request request, String baseUrl) {
		String body = "{\"model\":\"" + MODEL + "\",\"stream\":true,\"max_tokens\":" + request.maxTokens()
				+ (request.includeUsage() ? ",\"stream_options\":{\"include_usage\":true}" : "")
				+ ",\"messages\":[{\"role\":\"user\",\"content\":\"" + request.prompt() + "\"}]}";
		// Not StreamingClient: a reader that takes one buffer at a time and stops reading
		// behind a small receive window is what the slow-client scenarios need.
		HttpClient client = HttpClient.create(ConnectionProvider.newConnection()).headers((h) -> {
			h.set("content-type", "application/json");
			h.set("x-request-id", request.id());
			request.headers().forEach(h::set);
		});
		if (request.pauseAfterEvents() >= 0) {
			// A small receive window so a pause fills the socket buffers and blocks
			// tokengap's writes.
			client = client.option(ChannelOption.SO_RCVBUF, 2048);
		}
		Sinks.Empty<Void> done = Sinks.empty();
		client.post()
			.uri(baseUrl + "/v1/chat/completions")
			.send(ByteBufFlux.fromString(Mono.just(body)))
			.responseContent()
			.subscribe(new Reader(request, done));
		return done.asMono();
	}

	/** Reads a response one buffer at a time, pausing once if asked. */
	static final class Reader extends BaseSubscriber<ByteBuf> {

		private final Request request;

		private final Sinks.Empty<Void> done;

		private int events;

		private boolean paused;

		Reader(Request request, Sinks.Empty<Void> done) {
			this.request = request;
			this.done = done;
		}

		@Override
		protected void hookOnSubscribe(Subscription subscription) {
			request(1);
		}

		@Override
		protected void hookOnNext(ByteBuf buf) {
			for (int i = buf.readerIndex(); i < buf.writerIndex() - 1; i++) {
				if (buf.getByte(i) == '\n' && buf.getByte(i + 1) == '\n') {
					this.events++;
				}
			}
			if (!this.paused && this.request.pauseAfterEvents() >= 0
					&& this.events >= this.request.pauseAfterEvents()) {
				this.paused = true;
				Schedulers.parallel()
					.schedule(() -> request(1), this.request.pause().toMillis(),
							java.util.concurrent.TimeUnit.MILLISECONDS);
				return;
			}
			request(1);
		}

		@Override
		protected void hookFinally(reactor.core.publisher.SignalType type) {
			this.done.tryEmitEmpty();
		}

	}

	/**
	 * Waits until the simulator has produced {@code tokens} output tokens of the request.
	 */
	void awaitTokens(String requestId, int tokens) {
		org.awaitility.Awaitility.await()
			.pollInterval(2, java.util.concurrent.TimeUnit.MILLISECONDS)
			.atMost(Duration.ofSeconds(60))
			.until(() -> this.simulator.engine().trace(requestId).size() >= tokens);
	}

	/** Waits until every started stream ended and their spikes have been judged. */
	void awaitAll(List<Mono<Void>> streams) {
		Mono.when(streams).block(Duration.ofSeconds(120));
		// A spike is judged one scrape interval plus
		// the scrape timeout after its gap closed.
		Mono.delay(Duration.ofMillis(1500)).block();
	}

	List<SpikeRecord> spikes() {
		return this.attributor.records().stream().filter((r) -> this.requestIds.contains(r.requestId())).toList();
	}

	/**
	 * The cause the simulator's ground truth gives for the token that ended a gap: when
	 * its engine step ended on time the delay came after the engine (its HTTP layer, this
	 * host), unless a scenario knows better (a client it made stop reading); otherwise
	 * the trace says what the step contained.
	 */
	SpikeCause truthFromTrace(SpikeRecord spike) {
		Step step = step(spike);
		SpikeCause own = ownCause(step, spike);
		if (own != null) {
			return own;
		}
		TraceEntry entry = step.entry();
		if (entry.prefillTokensFromOthers() >= 1024) {
			return SpikeCause.PREFILL_INTERFERENCE;
		}
		return step.grew() ? SpikeCause.BATCH_GROWTH : SpikeCause.ENGINE_OTHER;
	}

	/**
	 * As {@link #truthFromTrace}, and a late engine step that nothing in it explains is
	 * queue pressure when the token's sequence ran alone in it while, as the step was
	 * scheduled, requests waited for capacity and the KV cache was over 0.9 full: the
	 * engine's state at the step itself, which tokengap sees only through scrapes. With
	 * other sequences in the step the stall was theirs too, and a queue slows nobody's
	 * step: then it is nothing in the engine's scheduling.
	 */
	SpikeCause truthWithQueue(SpikeRecord spike) {
		SpikeCause cause = truthFromTrace(spike);
		Step step = step(spike);
		if (cause != SpikeCause.ENGINE_OTHER || step == null || step.onTime(spike)) {
			return cause;
		}
		return step.aloneBesideAQueue() ? SpikeCause.QUEUE_PRESSURE : cause;
	}

	/**
	 * The ground truth of a mixed load, where a late step can have several reasons at
	 * once: the token's own preemption, else the largest part of the producing step's
	 * cost beyond a usual step, from the trace's breakdown: an injected engine stall (an
	 * engine hiccup, nothing in the engine's scheduling; when the token's sequence ran
	 * alone in the step, queue pressure if requests waited for capacity beside a KV cache
	 * over 0.9 full, as {@link #truthWithQueue} judges a lone stream), the prefill of
	 * other requests' new prompts, the recompute of preempted requests (at least 1,024
	 * tokens each, the rules' threshold), or the sequences a batch grew by (by the
	 * criteria of {@link #truthFromTrace}).
	 */
	SpikeCause truthByCost(SpikeRecord spike) {
		Step step = step(spike);
		SpikeCause own = ownCause(step, spike);
		if (own != null) {
			return own;
		}
		TraceEntry entry = step.entry();
		long batch = step.grew() ? (long) (this.simulator.engine().properties().stepCostPerSeq().toNanos()
				* (entry.batchSize() - step.usualBatch())) : 0;
		long prefill = (entry.newPrefillTokensFromOthers() >= 1024) ? entry.newPrefillCostNanos() : 0;
		long recompute = (entry.recomputeTokensFromOthers() >= 1024) ? entry.recomputeCostNanos() : 0;
		long stall = entry.stepStallNanos();
		long largest = Math.max(Math.max(batch, prefill), Math.max(recompute, stall));
		if (largest == 0 || largest == stall) {
			return step.aloneBesideAQueue() ? SpikeCause.QUEUE_PRESSURE : SpikeCause.ENGINE_OTHER;
		}
		if (largest == prefill) {
			return SpikeCause.PREFILL_INTERFERENCE;
		}
		return (largest == recompute) ? SpikeCause.PREEMPTION : SpikeCause.BATCH_GROWTH;
	}

	/**
	 * What a spike's token says before the contents of its step are read: unknown when
	 * the trace no longer holds it, nothing in the engine when its step ended on time,
	 * its own preemption; else null.
	 */
	private static SpikeCause ownCause(Step step, SpikeRecord spike) {
		if (step == null) {
			return SpikeCause.UNKNOWN;
		}
		if (step.onTime(spike)) {
			return SpikeCause.ENGINE_OTHER;
		}
		return step.entry().preempted() ? SpikeCause.PREEMPTION : null;
	}

	/** Whether the engine step that produced the spike's token ended on time. */
	boolean engineOnTime(SpikeRecord spike) {
		Step step = step(spike);
		return step != null && step.onTime(spike);
	}

	/**
	 * The trace entries of the token that ended a spike's gap and of the one before, with
	 * the request's whole trace.
	 */
	private record Step(List<TraceEntry> trace, TraceEntry entry, TraceEntry previous) {

		/**
		 * The engine ended the token's step on time: the step ended under the spike
		 * threshold after the previous one, and took less than half of the gap the client
		 * saw. A step that took most of the gap (a 170 ms prefill step seen as a 201 ms
		 * gap beside a 200 ms floor) is the engine's, judged by what it contained.
		 */
		boolean onTime(SpikeRecord spike) {
			long spacing = this.entry.stepEndNanos() - this.previous.stepEndNanos();
			return spacing < spike.thresholdMs() * 1_000_000 && 2 * spacing < spike.gapMs() * 1_000_000;
		}

		double usualBatch() {
			return medianBatch(this.trace);
		}

		/** The batch grew by 2 or more and by 1.5x over the request's usual batch. */
		boolean grew() {
			double usual = usualBatch();
			return this.entry.batchSize() - usual >= 2 && this.entry.batchSize() >= 1.5 * usual;
		}

		/**
		 * Ran alone in its step while requests waited for capacity beside a KV cache over
		 * 0.9 full.
		 */
		boolean aloneBesideAQueue() {
			return this.entry.batchSize() == 1 && this.entry.waitingForCapacity() > 0
					&& this.entry.kvCacheUsage() > 0.9;
		}

	}

	/** The step of a spike's token, or null when the trace no longer holds it. */
	private Step step(SpikeRecord spike) {
		List<TraceEntry> trace = this.simulator.engine().trace(spike.requestId());
		TraceEntry entry = find(trace, spike.tokenIndex());
		TraceEntry previous = find(trace, spike.tokenIndex() - 1);
		return (entry == null || previous == null) ? null : new Step(trace, entry, previous);
	}

	private static double medianBatch(List<TraceEntry> trace) {
		int[] sizes = trace.stream().mapToInt(TraceEntry::batchSize).sorted().toArray();
		return sizes[sizes.length / 2];
	}

	private static TraceEntry find(List<TraceEntry> trace, int index) {
		for (TraceEntry entry : trace) {
			if (entry.tokenIndex() == index) {
				return entry;
			}
		}
		return null;
	}

	/**
	 * Compares attributed causes with the truth, prints the row and returns the share
	 * correct.
	 */
	double score(String scenario, List<SpikeRecord> spikes,
			java.util.function.Function<SpikeRecord, SpikeCause> truth) {
		Map<SpikeCause, Integer> attributed = new EnumMap<>(SpikeCause.class);
		int correct = 0;
		List<String> wrong = new ArrayList<>();
		for (SpikeRecord spike : spikes) {
			SpikeCause expected = truth.apply(spike);
			attributed.merge(SpikeCause.valueOf(spike.cause().toUpperCase()), 1, Integer::sum);
			if (expected.label().equals(spike.cause())) {
				correct++;
			}
			else {
				wrong.add(spike.requestId() + "#" + spike.tokenIndex() + " expected " + expected.label() + " got "
						+ spike.cause() + " " + spike.evidence());
			}
		}
		double share = spikes.isEmpty() ? 0 : (double) correct / spikes.size();
		StringBuilder row = new StringBuilder("CONFUSION | " + scenario + " | spikes " + spikes.size() + " |");
		for (SpikeCause cause : SpikeCause.values()) {
			row.append(' ').append(cause.label()).append('=').append(attributed.getOrDefault(cause, 0));
		}
		row.append(String.format(" | correct %.0f%% | gaps %d", share * 100, this.gaps.get()));
		System.out.println(row);
		wrong.stream().limit(10).forEach((w) -> System.out.println("  mismatch " + w));
		return share;
	}

	/**
	 * Prints the confusion matrix of one run, one {@code MATRIX} line per true cause
	 * (columns: the attributed causes), and the mismatches with their summaries; returns
	 * the share correct.
	 */
	double matrix(String scenario, List<SpikeRecord> spikes,
			java.util.function.Function<SpikeRecord, SpikeCause> truth) {
		Map<SpikeCause, Map<SpikeCause, Integer>> rows = new EnumMap<>(SpikeCause.class);
		int correct = 0;
		List<String> wrong = new ArrayList<>();
		for (SpikeRecord spike : spikes) {
			SpikeCause expected = truth.apply(spike);
			SpikeCause got = SpikeCause.valueOf(spike.cause().toUpperCase());
			rows.computeIfAbsent(expected, (c) -> new EnumMap<>(SpikeCause.class)).merge(got, 1, Integer::sum);
			if (expected == got) {
				correct++;
				System.out.println("  spike " + spike.requestId() + "#" + spike.tokenIndex() + " gap "
						+ spike.upstreamGapMs() + " ms: " + spike.summary());
			}
			else {
				wrong.add(spike.requestId() + "#" + spike.tokenIndex() + " gap " + spike.upstreamGapMs()
						+ " ms expected " + expected.label() + " got " + spike.summary());
			}
		}
		double share = spikes.isEmpty() ? 0 : (double) correct / spikes.size();
		System.out.println(String.format("MATRIX | %s | spikes %d | correct %d (%.0f%%) | gaps %d", scenario,
				spikes.size(), correct, share * 100, this.gaps.get()));
		rows.forEach((expected, got) -> {
			StringBuilder row = new StringBuilder("MATRIX | " + scenario + " | true " + expected.label() + " |");
			for (SpikeCause cause : SpikeCause.values()) {
				row.append(' ').append(cause.label()).append('=').append(got.getOrDefault(cause, 0));
			}
			System.out.println(row);
		});
		wrong.stream().limit(20).forEach((w) -> System.out.println("  mismatch " + w));
		return share;
	}

	/**
	 * How often a mixed scenario is run in one test: the same workload must get the same
	 * verdicts every time ({@code -Dtokengap.scenario.runs=N} changes it).
	 */
	static final int RUNS = Integer.getInteger("tokengap.scenario.runs", 5);

	/**
	 * Runs one workload {@link #RUNS} times on the same application and simulator, prints
	 * each run's confusion matrix and the verdict each true cause got in each run, and
	 * requires of every run at least {@code minSpikes} spikes and 90% of them right, and
	 * of every true cause the same verdict (the cause most of its spikes were attributed
	 * to) in every run it appears in.
	 * @param scenario the scenario's name in the printed lines
	 * @param workload starts run {@code n}'s streams (request ids unique per run) and
	 * returns them
	 * @param truth the ground truth of a spike
	 * @param minSpikes spikes each run must have at least
	 */
	void assertRepeatable(String scenario, java.util.function.IntFunction<List<Mono<Void>>> workload,
			java.util.function.Function<SpikeRecord, SpikeCause> truth, int minSpikes) {
		List<Map<SpikeCause, SpikeCause>> verdicts = new ArrayList<>();
		List<Double> shares = new ArrayList<>();
		List<Integer> counts = new ArrayList<>();
		for (int run = 1; run <= RUNS; run++) {
			this.requestIds.clear();
			this.gaps.set(0);
			awaitAll(workload.apply(run));
			List<SpikeRecord> spikes = spikes();
			shares.add(matrix(scenario + " run " + run, spikes, truth));
			counts.add(spikes.size());
			verdicts.add(verdicts(spikes, truth));
		}
		Map<SpikeCause, List<SpikeCause>> byTruth = new EnumMap<>(SpikeCause.class);
		for (Map<SpikeCause, SpikeCause> run : verdicts) {
			run.forEach((expected, got) -> byTruth.computeIfAbsent(expected, (c) -> new ArrayList<>()).add(got));
		}
		byTruth.forEach((expected, got) -> System.out
			.println("VERDICT | " + scenario + " | true " + expected.label() + " | runs " + got));
		System.out.println("VERDICT | " + scenario + " | correct per run " + shares + " | spikes per run " + counts);
		assertThat(counts).as("spikes per run").allSatisfy((n) -> assertThat(n).isGreaterThanOrEqualTo(minSpikes));
		assertThat(shares).as("share right per run").allSatisfy((s) -> assertThat(s).isGreaterThanOrEqualTo(0.9));
		byTruth.forEach((expected, got) -> assertThat(java.util.Set.copyOf(got))
			.as("verdicts for true " + expected.label() + " over the runs")
			.hasSize(1));
	}

	/** The cause most spikes of each true cause were attributed to. */
	private static Map<SpikeCause, SpikeCause> verdicts(List<SpikeRecord> spikes,
			java.util.function.Function<SpikeRecord, SpikeCause> truth) {
		Map<SpikeCause, Map<SpikeCause, Integer>> rows = new EnumMap<>(SpikeCause.class);
		for (SpikeRecord spike : spikes) {
			rows.computeIfAbsent(truth.apply(spike), (c) -> new EnumMap<>(SpikeCause.class))
				.merge(SpikeCause.valueOf(spike.cause().toUpperCase()), 1, Integer::sum);
		}
		Map<SpikeCause, SpikeCause> verdicts = new EnumMap<>(SpikeCause.class);
		rows.forEach((expected, got) -> verdicts.put(expected,
				got.entrySet().stream().max(Map.Entry.comparingByValue()).orElseThrow().getKey()));
		return verdicts;
	}

	void assertAccurate(String scenario, SpikeCause cause, java.util.function.Function<SpikeRecord, SpikeCause> truth,
			int minSpikes) {
		List<SpikeRecord> spikes = spikes();
		double share = score(scenario, spikes, truth);
		assertThat(spikes).as("spikes in scenario " + scenario).hasSizeGreaterThanOrEqualTo(minSpikes);
		assertThat(spikes.stream().filter((s) -> truth.apply(s) == cause).count())
			.as("spikes whose true cause is " + cause.label())
			.isGreaterThanOrEqualTo(minSpikes);
		assertThat(share).as("share of spikes attributed to their true cause").isGreaterThanOrEqualTo(0.9);
	}

}
