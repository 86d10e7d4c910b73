package dev.tokengap.attribution;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.tokengap.backend.EngineHistory;
import dev.tokengap.backend.EngineSample;
import dev.tokengap.metrics.BucketEdges;
import dev.tokengap.metrics.Endpoint;
import dev.tokengap.metrics.ExchangeRecorder;
import dev.tokengap.metrics.TokengapMeters;
import dev.tokengap.timing.ContentWrite;
import dev.tokengap.metrics.StreamOutcome;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * What the event loops hand the attribution thread: a spike, and the end of a stream that
 * had one; nothing for a stream without spikes.
 */
class SpikeAttributorTests {

	private static final long GAP = TimeUnit.MILLISECONDS.toNanos(20);

	private final PrometheusRegistry registry = new PrometheusRegistry();

	private final TokengapMeters meters = new TokengapMeters(this.registry, BucketEdges.VLLM_V1,
			Duration.ofMillis(400).toNanos(), System::nanoTime);

	private final EngineHistory history = new EngineHistory();

	private final SpikeAttributor attributor = new SpikeAttributor(
			new AttributionProperties(Duration.ofMillis(100), 4, 200, 1024, 1.5, 0.9, 10, 10_000,
					Duration.ofSeconds(10)),
			this.history, this.meters, System::nanoTime, Duration.ofMillis(50), Duration.ofMillis(50));

	SpikeAttributorTests() {
		this.meters.gapObserver(this.attributor.detector());
	}

	@AfterEach
	void close() {
		this.attributor.close();
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

	/** A completed stream of 30 events 20 ms apart, one gap of 600 ms after event N. */
	private void stream(String id, int spikeAfter) {
		stream(id, spikeAfter, System.nanoTime());
	}

	private void stream(String id, int spikeAfter, long start) {
		long now = start;
		ExchangeRecorder recorder = new ExchangeRecorder(this.meters, now);
		recorder.route("m", Endpoint.CHAT_COMPLETIONS);
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
