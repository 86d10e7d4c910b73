package dev.tokengap.metrics;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;

import io.prometheus.metrics.config.EscapingScheme;
import io.prometheus.metrics.core.datapoints.DistributionDataPoint;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.expositionformats.ExpositionFormatWriter;
import io.prometheus.metrics.expositionformats.OpenMetricsTextFormatWriter;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot.HistogramDataPointSnapshot;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class LoopHistogramTests {

	private static final double[] EDGES = { 0.01, 0.025, 0.05, 0.075, 0.1, 0.5, 1.0, 2.5 };

	private final PrometheusRegistry ours = new PrometheusRegistry();

	private final LoopHistogram histogram = LoopHistogram.register(this.ours, "tokengap_test_seconds", "A test", EDGES,
			"model_name", "endpoint");

	@Test
	void exposesWhatTheClientLibrarysHistogramExposesForTheSameObservations() throws IOException {
		PrometheusRegistry library = new PrometheusRegistry();
		Histogram reference = Histogram.builder()
			.name("tokengap_test_seconds")
			.help("A test")
			.labelNames("model_name", "endpoint")
			.classicUpperBounds(EDGES)
			.classicOnly()
			.withoutExemplars()
			.register(library);
		Random random = new Random(7);
		List<Double> values = new ArrayList<>(List.of(0.0, -1.0, 0.01, 0.025, 2.5, 2.5000001, 1e9,
				Double.POSITIVE_INFINITY, Double.NaN, 0.0100000001));
		for (int i = 0; i < 1_000; i++) {
			values.add(random.nextDouble() * 3);
		}
		for (int i = 0; i < values.size(); i++) {
			String model = (i % 3 == 0) ? "m1" : "m2";
			this.histogram.labelValues(model, "chat").observe(values.get(i));
			reference.labelValues(model, "chat").observe(values.get(i));
		}
		for (ExpositionFormatWriter writer : List.of(new PrometheusTextFormatWriter(false),
				new OpenMetricsTextFormatWriter(false, false))) {
			assertThat(text(writer, this.ours)).isEqualTo(text(writer, library)).contains("le=\"+Inf\"");
		}
	}

	@Test
	void countsEveryObservationOfThreadsBeyondThoseWithCellsOfTheirOwn() throws InterruptedException {
		DistributionDataPoint point = this.histogram.labelValues("m", "chat");
		int threads = LoopHistogram.OWNED_CELLS + 8;
		int each = 20_000;
		CountDownLatch start = new CountDownLatch(1);
		List<Thread> started = new ArrayList<>();
		for (int t = 0; t < threads; t++) {
			Thread thread = new Thread(() -> {
				await(start);
				for (int i = 0; i < each; i++) {
					point.observe((i % 2 == 0) ? 0.02 : 5.0);
				}
			});
			thread.start();
			started.add(thread);
		}
		start.countDown();
		for (Thread thread : started) {
			thread.join();
		}
		HistogramDataPointSnapshot snapshot = snapshot();
		assertThat(snapshot.getCount()).isEqualTo((long) threads * each).isEqualTo(point.getCount());
		assertThat(snapshot.getClassicBuckets().getCount(1)).isEqualTo((long) threads * each / 2);
		assertThat(snapshot.getClassicBuckets().getCount(EDGES.length)).isEqualTo((long) threads * each / 2);
		assertThat(snapshot.getSum()).isEqualTo(point.getSum()).isCloseTo(threads * (each / 2) * 5.02, within(1e-3));
	}

	@Test
	void observesWithoutAllocatingOnceAThreadHasItsCell() {
		DistributionDataPoint point = this.histogram.labelValues("m", "chat");
		point.observe(0.1);
		long before = allocatedBytes();
		for (int i = 0; i < 1_000_000; i++) {
			point.observe(i * 1e-6);
		}
		assertThat(allocatedBytes() - before).isLessThan(16 * 1024);
		assertThat(point.getCount()).isEqualTo(1_000_001);
	}

	@Test
	void findsTheFirstBucketWhoseBoundIsAtOrAboveTheValue() {
		double[] bounds = { 1, 2, 3, Double.POSITIVE_INFINITY };
		assertThat(LoopHistogram.Series.bucket(bounds, Double.NEGATIVE_INFINITY)).isZero();
		assertThat(LoopHistogram.Series.bucket(bounds, 1)).isZero();
		assertThat(LoopHistogram.Series.bucket(bounds, 1.5)).isEqualTo(1);
		assertThat(LoopHistogram.Series.bucket(bounds, 3)).isEqualTo(2);
		assertThat(LoopHistogram.Series.bucket(bounds, 3.01)).isEqualTo(3);
		assertThat(LoopHistogram.Series.bucket(bounds, Double.POSITIVE_INFINITY)).isEqualTo(3);
	}

	@Test
	void rejectsTheWrongNumberOfLabelValues() {
		assertThatIllegalArgumentException().isThrownBy(() -> this.histogram.labelValues("m"))
			.withMessageContaining("tokengap_test_seconds");
	}

	private HistogramDataPointSnapshot snapshot() {
		HistogramSnapshot snapshot = this.histogram.collect();
		assertThat(snapshot.getDataPoints()).hasSize(1);
		return snapshot.getDataPoints().get(0);
	}

	/**
	 * A bucket takes a trace's observation as its exemplar, keeps it for 5 s against
	 * newer ones, then takes the next; only the OpenMetrics exposition shows it.
	 */
	@Test
	void aBucketKeepsOneExemplarPerIntervalShownInOpenMetricsOnly() throws IOException {
		RequestTrace first = new W3cRequestTracer(1).start(null, null);
		RequestTrace second = new W3cRequestTracer(1).start(null, null);
		LoopHistogram.Series series = this.histogram.labelValues("m", "chat");
		long second5 = LoopHistogram.EXEMPLAR_INTERVAL_NANOS;
		series.observe(0.7, 1_000, first);
		series.observe(0.8, 1_000 + second5 - 1, second);
		series.observe(0.02, 2_000, (RequestTrace) null);
		HistogramDataPointSnapshot point = series.snapshot();
		assertThat(point.getExemplars().size()).isEqualTo(1);
		assertThat(point.getExemplars().get(0).getValue()).isEqualTo(0.7);
		assertThat(point.getExemplars().get(0).getLabels().get("trace_id")).isEqualTo(first.traceId());
		assertThat(point.getExemplars().get(0).getLabels().get("span_id")).isEqualTo(first.spanId());
		series.observe(0.9, 1_000 + second5, second);
		series.observe(3.0, 1_000, "0af7651916cd43dd8448eb211c80319c");
		String open = text(new OpenMetricsTextFormatWriter(false, true), this.ours);
		assertThat(open)
			.contains("le=\"1.0\"} 4 # {span_id=\"" + second.spanId() + "\",trace_id=\"" + second.traceId() + "\"} 0.9")
			.contains("le=\"+Inf\"} 5 # {trace_id=\"0af7651916cd43dd8448eb211c80319c\"} 3.0");
		String text = text(new PrometheusTextFormatWriter(false), this.ours);
		assertThat(text).doesNotContain("trace_id").doesNotContain(" # {");
	}

	private static String text(ExpositionFormatWriter writer, PrometheusRegistry registry) throws IOException {
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		writer.write(out, registry.scrape(), EscapingScheme.DEFAULT);
		return out.toString(StandardCharsets.UTF_8);
	}

	private static org.assertj.core.data.Offset<Double> within(double offset) {
		return org.assertj.core.data.Offset.offset(offset);
	}

	private static void await(CountDownLatch latch) {
		try {
			latch.await();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private static long allocatedBytes() {
		return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean()).getCurrentThreadAllocatedBytes();
	}

}
