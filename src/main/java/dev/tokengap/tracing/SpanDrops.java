package dev.tokengap.tracing;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.common.export.MemoryMode;
import io.opentelemetry.sdk.metrics.InstrumentType;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.data.AggregationTemporality;
import io.opentelemetry.sdk.metrics.data.LongPointData;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.metrics.data.MetricDataType;
import io.opentelemetry.sdk.metrics.export.CollectionRegistration;
import io.opentelemetry.sdk.metrics.export.MetricReader;

/**
 * Spans the SDK lost, read from the SDK's own metrics of its span pipeline when asked (a
 * scrape): those its batch processor dropped because its queue was full
 * ({@code processedSpans{dropped=true}}), and those its OTLP exporter failed to send
 * ({@code otlp.exporter.exported{success=false}}: the collector is down or refused them).
 * Nothing is read between scrapes.
 */
public final class SpanDrops implements MetricReader {

	private static final AttributeKey<Boolean> DROPPED = AttributeKey.booleanKey("dropped");

	private static final AttributeKey<Boolean> SUCCESS = AttributeKey.booleanKey("success");

	private final SdkMeterProvider meters;

	private volatile CollectionRegistration registration = CollectionRegistration.noop();

	/** Creates the reader and the meter provider to give the processor and exporter. */
	public SpanDrops() {
		this.meters = SdkMeterProvider.builder().registerMetricReader(this).build();
	}

	/**
	 * @return the meter provider the batch processor and the exporter report to
	 */
	public SdkMeterProvider meterProvider() {
		return this.meters;
	}

	/**
	 * @return spans dropped because the export queue was full
	 */
	public long queueFull() {
		return sum(false);
	}

	/**
	 * @return spans in exports that failed
	 */
	public long exportFailed() {
		return sum(true);
	}

	private long sum(boolean exporter) {
		long total = 0;
		for (MetricData metric : this.registration.collectAllMetrics()) {
			if (metric.getType() != MetricDataType.LONG_SUM) {
				continue;
			}
			boolean queue = metric.getName().equals("processedSpans");
			boolean exported = metric.getName().endsWith(".exporter.exported");
			if (exporter ? !exported : !queue) {
				continue;
			}
			for (LongPointData point : metric.getLongSumData().getPoints()) {
				boolean lost = exporter ? Boolean.FALSE.equals(point.getAttributes().get(SUCCESS))
						: Boolean.TRUE.equals(point.getAttributes().get(DROPPED));
				if (lost) {
					total += point.getValue();
				}
			}
		}
		return total;
	}

	@Override
	public void register(CollectionRegistration registration) {
		this.registration = registration;
	}

	@Override
	public AggregationTemporality getAggregationTemporality(InstrumentType instrumentType) {
		return AggregationTemporality.CUMULATIVE;
	}

	@Override
	public MemoryMode getMemoryMode() {
		return MemoryMode.IMMUTABLE_DATA;
	}

	@Override
	public CompletableResultCode forceFlush() {
		return CompletableResultCode.ofSuccess();
	}

	@Override
	public CompletableResultCode shutdown() {
		return CompletableResultCode.ofSuccess();
	}

}
