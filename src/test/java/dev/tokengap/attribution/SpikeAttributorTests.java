package dev.tokengap.attribution;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.tokengap.backend.EngineHistory;
import dev.tokengap.metrics.BucketEdges;
import dev.tokengap.metrics.Endpoint;
import dev.tokengap.metrics.ExchangeRecorder;
import dev.tokengap.metrics.RequestTrace;
import dev.tokengap.metrics.W3cRequestTracer;
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

	private final SpikeAttributor attributor = new SpikeAttributor(
			new AttributionProperties(Duration.ofMillis(100), 4, 200, 1024, 1.5, 0.9, 10, 10_000,
					Duration.ofSeconds(10)),
			new EngineHistory(), this.meters, System::nanoTime, Duration.ofMillis(50), Duration.ofMillis(50));

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

	private void stream(String id, int spikeAfter) {
		stream(id, spikeAfter, null);
	}

	/** A completed stream of 30 events 20 ms apart, one gap of 600 ms after event N. */
	private void stream(String id, int spikeAfter, RequestTrace trace) {
		long now = System.nanoTime();
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
