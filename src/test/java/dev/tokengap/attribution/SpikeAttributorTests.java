package dev.tokengap.attribution;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.netty.channel.DefaultEventLoop;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.tokengap.backend.EngineHistory;
import dev.tokengap.backend.EngineSample;
import dev.tokengap.metrics.BucketEdges;
import dev.tokengap.metrics.Endpoint;
import dev.tokengap.metrics.ExchangeRecorder;
import dev.tokengap.metrics.RequestTrace;
import dev.tokengap.metrics.W3cRequestTracer;
import dev.tokengap.metrics.TokengapMeters;
import dev.tokengap.timing.ContentWrite;
import dev.tokengap.metrics.StreamOutcome;

import static dev.tokengap.attribution.SpikeAttributor.HAND_OFF_CAPACITY;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * What the event loops hand over: a spike, and the end of a stream that had one; nothing
 * for a stream without spikes. The look at the other streams runs on the scan thread; a
 * spike the full hand-off refuses is counted and kept as unknown.
 */
class SpikeAttributorTests {

	private static final long GAP = TimeUnit.MILLISECONDS.toNanos(20);

	private final PrometheusRegistry registry = new PrometheusRegistry();

	private final TokengapMeters meters = new TokengapMeters(this.registry, BucketEdges.VLLM_V1,
			Duration.ofMillis(400).toNanos(), System::nanoTime);

	private static final AttributionProperties PROPERTIES = new AttributionProperties(Duration.ofMillis(100), 4, 200,
			1024, 1.5, 0.9, 10, 10_000, Duration.ofSeconds(10));

	private final EngineHistory history = new EngineHistory();

	private final SpikeAttributor attributor = new SpikeAttributor(PROPERTIES, this.history, this.meters,
			System::nanoTime, Duration.ofMillis(50), Duration.ofMillis(50));

	/** A real event loop, as the proxy's streams run on. */
	private final DefaultEventLoop loop = new DefaultEventLoop();

	private final List<Thread> scanThreads = new CopyOnWriteArrayList<>();

	SpikeAttributorTests() {
		this.meters.gapObserver(this.attributor.detector());
	}

	@AfterEach
	void close() {
		this.attributor.close();
		this.loop.shutdownGracefully(0, 0, TimeUnit.SECONDS);
	}

	@Test
	void aStreamWithoutSpikesHandsTheAttributionThreadNothing() {
		stream("chatcmpl-steady", -1);
		stream("chatcmpl-steady-2", -1);
		assertThat(this.attributor.tasksHandedOver()).isZero();
	}

	@Test
	void aStreamWithASpikeHandsOverTheSpikeAndItsEndAndTheSpikeIsCounted() {
		stream("chatcmpl-steady", -1);
		stream("chatcmpl-spiky", 10);
		assertThat(this.attributor.tasksHandedOver()).isEqualTo(2);
		await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(spikesCounted()).isEqualTo(1));
		assertThat(this.attributor.records()).singleElement()
			.satisfies((record) -> assertThat(record.requestId()).isEqualTo("chatcmpl-spiky"));
	}

	@Test
	void theLookAtTheOtherStreamsRunsOnTheScanThreadOnceTheEventLoopHasMovedOn() throws Exception {
		CountDownLatch scanning = new CountDownLatch(1);
		try (SpikeAttributor gated = gatedAttributor(HAND_OFF_CAPACITY, scanning)) {
			this.meters.gapObserver(gated.detector());
			this.loop.submit(() -> {
				stream("chatcmpl-peer", -1);
				stream("chatcmpl-spiky", 10);
			}).get(5, TimeUnit.SECONDS);
			assertThat(gated.spikesAwaitingScan()).as("handed over, not looked into on the loop").isEqualTo(1);
			assertThat(gated.records()).isEmpty();
			scanning.countDown();
			await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(spikesCounted()).isEqualTo(1));
			assertThat(gated.records()).singleElement().satisfies((record) -> {
				assertThat(record.requestId()).isEqualTo("chatcmpl-spiky");
				assertThat(record.evidence().peersDecoding()).as("the peer, seen by the scan thread").isEqualTo(1);
			});
			assertThat(this.scanThreads).singleElement()
				.satisfies((thread) -> assertThat(thread.getName()).isEqualTo("test-spike-scan"));
			assertThat(gated.spikesNotScanned()).isZero();
		}
	}

	@Test
	void aSpikeTheFullHandOffRefusesIsCountedAndKeptAsUnknown() throws Exception {
		CountDownLatch scanning = new CountDownLatch(1);
		try (SpikeAttributor gated = gatedAttributor(1, scanning)) {
			this.meters.gapObserver(gated.detector());
			this.loop.submit(() -> {
				stream("chatcmpl-first", 10);
				stream("chatcmpl-second", 12);
				stream("chatcmpl-third", 14);
			}).get(5, TimeUnit.SECONDS);
			assertThat(gated.spikesAwaitingScan()).isEqualTo(1);
			assertThat(gated.spikesNotScanned()).isEqualTo(2);
			await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(spikesCounted()).isEqualTo(2));
			assertThat(gated.records()).hasSize(2).allSatisfy((record) -> {
				assertThat(record.cause()).isEqualTo("unknown");
				assertThat(record.summary()).isEqualTo("unknown: " + SpikeRecord.NOT_ATTRIBUTED);
			}).extracting(SpikeRecord::requestId).containsExactlyInAnyOrder("chatcmpl-second", "chatcmpl-third");
			scanning.countDown();
			await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(spikesCounted()).isEqualTo(3));
			assertThat(gated.records()).extracting(SpikeRecord::requestId)
				.containsExactlyInAnyOrder("chatcmpl-first", "chatcmpl-second", "chatcmpl-third");
		}
	}

	/**
	 * Spikes of one scan batch that fall due at the same tick of the judging grid are
	 * judged in one task, one wake-up of the attribution thread, not one each; each is
	 * still judged, kept and counted once its stream has ended.
	 */
	@Test
	void spikesOfOneBatchDueAtOneTickAreJudgedInOneTask() throws Exception {
		CountDownLatch scanning = new CountDownLatch(1);
		try (SpikeAttributor gated = gatedAttributor(HAND_OFF_CAPACITY, scanning)) {
			this.meters.gapObserver(gated.detector());
			long start = System.nanoTime();
			this.loop.submit(() -> {
				for (int i = 0; i < 6; i++) {
					stream("chatcmpl-" + i, 10, start);
				}
			}).get(5, TimeUnit.SECONDS);
			assertThat(gated.spikesAwaitingScan()).isEqualTo(6);
			scanning.countDown();
			await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(spikesCounted()).isEqualTo(6));
			assertThat(gated.judgeTasks()).as("one tick, one task").isEqualTo(1);
			assertThat(gated.records()).hasSize(6)
				.allSatisfy((record) -> assertThat(record.evidence().peersDecoding()).isEqualTo(5));
		}
	}

	/**
	 * Spikes of one batch due a tick or more apart are judged at their own ticks, in
	 * separate tasks.
	 */
	@Test
	void spikesOfOneBatchDueAtDifferentTicksAreJudgedInATaskEach() throws Exception {
		CountDownLatch scanning = new CountDownLatch(1);
		try (SpikeAttributor gated = gatedAttributor(HAND_OFF_CAPACITY, scanning)) {
			this.meters.gapObserver(gated.detector());
			long start = System.nanoTime();
			long apart = 2 * SpikeAttributor.JUDGE_TICK_NANOS;
			this.loop.submit(() -> {
				stream("chatcmpl-early", 10, start);
				stream("chatcmpl-late", 10, start + apart);
			}).get(5, TimeUnit.SECONDS);
			scanning.countDown();
			await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(spikesCounted()).isEqualTo(2));
			assertThat(gated.judgeTasks()).isEqualTo(2);
		}
	}

	/**
	 * An attributor whose scan thread starts taking spikes once {@code scanning} opens.
	 */
	private SpikeAttributor gatedAttributor(int capacity, CountDownLatch scanning) {
		return new SpikeAttributor(PROPERTIES, new EngineHistory(), this.meters, System::nanoTime,
				Duration.ofMillis(50), Duration.ofMillis(50), capacity, (task) -> {
					Thread thread = new Thread(() -> {
						try {
							scanning.await();
						}
						catch (InterruptedException ex) {
							return;
						}
						task.run();
					}, "test-spike-scan");
					this.scanThreads.add(thread);
					return thread;
				});
	}

	/**
	 * A spike's record is placed once its stream has ended: the stream's length, the
	 * third the spike sits in, and the request's trace id, which the counted spike's
	 * bucket carries as its exemplar.
	 */
	@Test
	void aSpikeIsPlacedInItsStreamWhenTheStreamEndsAndCarriesItsTraceId() {
		stream("chatcmpl-steady", -1);
		RequestTrace trace = new W3cRequestTracer(1).start(null, null);
		stream("chatcmpl-late", 25, trace);
		await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(spikesCounted()).isEqualTo(1));
		SpikeRecord record = this.attributor.records().get(0);
		assertThat(record.requestId()).isEqualTo("chatcmpl-late");
		assertThat(record.tokenIndex()).isEqualTo(25);
		assertThat(record.streamEvents()).isEqualTo(30);
		assertThat(record.position()).isEqualTo("tail");
		assertThat(record.traceId()).isEqualTo(trace.traceId());
		HistogramSnapshot.HistogramDataPointSnapshot point = spikeSeries();
		assertThat(point.getLabels().get("position")).isEqualTo("tail");
		assertThat(point.getExemplars().size()).isEqualTo(1);
		assertThat(point.getExemplars().get(0).getLabels().get("trace_id")).isEqualTo(trace.traceId());
	}

	/**
	 * A lone stream stalls while the engine preempts a request (its preemption counter
	 * rises in the gap): with no other stream to compare with, that is its own
	 * preemption, until the engine's per-request preemption histogram says, once the
	 * stream has ended, that the one request that finished then was never preempted.
	 */
	@Test
	void theEnginesPerRequestPreemptionHistogramCorrectsAStallBlamedOnTheStreamsOwnPreemption() {
		long start = System.nanoTime();
		// Events every 20 ms, the gap from 220 ms to 800 ms, the last at 1,180 ms;
		// the engine finished the request (and no other) at 1,150 ms.
		for (long at = -100; at <= 2000; at += 50) {
			long nanos = start + TimeUnit.MILLISECONDS.toNanos(at);
			double preemptions = (at >= 500) ? 1 : 0;
			double finished = (at >= 1150) ? 6 : 5;
			this.history.append(new EngineSample(nanos, 2, 0, Double.NaN, 0.5, preemptions, 1000, 500, 0, 1000,
					Double.NaN, Double.NaN, Double.NaN, finished, 3));
		}
		stream("chatcmpl-lone", 10, start);
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(this.attributor.records()).singleElement()
				.satisfies((record) -> assertThat(record.cause()).isEqualTo("engine_other")));
		SpikeRecord record = this.attributor.records().get(0);
		assertThat(record.scope()).isEqualTo("alone");
		assertThat(record.causes()).containsSubsequence("engine_other", "preemption");
		assertThat(record.summary()).contains("the engine's per-request preemption histogram says it never preempted");
		assertThat(record.engine().preemptions()).isZero();
		await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(spikesCounted()).isEqualTo(1));
	}

	/**
	 * The engine's prefill rate is learned from its whole history (1,200 samples at most)
	 * once for each sample the scraper adds, not once for each spike: spikes come in
	 * bursts between two scrapes.
	 */
	@Test
	void thePrefillRateIsLearnedOnceForEachNewEngineSampleNotForEachSpike() {
		long start = System.nanoTime();
		for (long at = -100; at <= 2000; at += 50) {
			this.history.append(sample(start + TimeUnit.MILLISECONDS.toNanos(at), at));
		}
		stream("chatcmpl-a", 10, start);
		stream("chatcmpl-b", 12, start);
		stream("chatcmpl-c", 14, start);
		await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(spikesCounted()).isEqualTo(3));
		assertThat(this.attributor.prefillRateReads()).isEqualTo(1);
		this.history.append(sample(start + TimeUnit.MILLISECONDS.toNanos(2050), 2050));
		stream("chatcmpl-d", 10, start);
		await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(spikesCounted()).isEqualTo(4));
		assertThat(this.attributor.prefillRateReads()).as("read again after the new sample").isEqualTo(2);
	}

	/** An engine sample with prefill histograms that rise with time. */
	private static EngineSample sample(long nanos, long atMillis) {
		double requests = atMillis / 50.0;
		return new EngineSample(nanos, 2, 0, Double.NaN, 0.5, 0, 1000, 500, 0, 1000, requests * 0.4, requests,
				requests * 2000, requests, 0);
	}

	private void stream(String id, int spikeAfter) {
		stream(id, spikeAfter, null, System.nanoTime());
	}

	private void stream(String id, int spikeAfter, RequestTrace trace) {
		stream(id, spikeAfter, trace, System.nanoTime());
	}

	private void stream(String id, int spikeAfter, long start) {
		stream(id, spikeAfter, null, start);
	}

	/** A completed stream of 30 events 20 ms apart, one gap of 600 ms after event N. */
	private void stream(String id, int spikeAfter, RequestTrace trace, long start) {
		long now = start;
		ExchangeRecorder recorder = new ExchangeRecorder(this.meters, now);
		recorder.route("m", Endpoint.CHAT_COMPLETIONS);
		if (trace != null) {
			recorder.trace(trace);
		}
		recorder.identify(id, 16);
		recorder.streamStarted();
		ContentWrite event = new ContentWrite();
		for (int i = 0; i < 30; i++) {
			now += (i == spikeAfter) ? 30 * GAP : GAP;
			recorder.bodyWritten(now);
			event.setArrivalNanos(now - 50_000);
			event.setWriteStartNanos(now - 10_000);
			event.setWriteNanos(now);
			recorder.contentWritten(0, event);
		}
		recorder.responded(200);
		recorder.outcome(StreamOutcome.COMPLETED);
		recorder.completed(now);
		recorder.close(now, false);
	}

	private HistogramSnapshot.HistogramDataPointSnapshot spikeSeries() {
		return this.registry.scrape()
			.stream()
			.filter((snapshot) -> snapshot instanceof HistogramSnapshot)
			.filter((snapshot) -> TokengapMeters.GAP_SPIKE.startsWith(snapshot.getMetadata().getPrometheusName()))
			.flatMap((snapshot) -> ((HistogramSnapshot) snapshot).getDataPoints().stream())
			.findFirst()
			.orElseThrow();
	}

	private long spikesCounted() {
		return this.registry.scrape()
			.stream()
			.filter((snapshot) -> snapshot instanceof HistogramSnapshot)
			.filter((snapshot) -> TokengapMeters.GAP_SPIKE.startsWith(snapshot.getMetadata().getPrometheusName()))
			.flatMap((snapshot) -> ((HistogramSnapshot) snapshot).getDataPoints().stream())
			.mapToLong(HistogramSnapshot.HistogramDataPointSnapshot::getCount)
			.sum();
	}

}
