package dev.tokengap.metrics;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

import io.prometheus.metrics.core.datapoints.DistributionDataPoint;
import io.prometheus.metrics.model.registry.Collector;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.ClassicHistogramBuckets;
import io.prometheus.metrics.model.snapshots.Exemplar;
import io.prometheus.metrics.model.snapshots.Exemplars;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot.HistogramDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricMetadata;

/**
 * A classic Prometheus histogram whose counts are kept per writing thread: each event
 * loop adds to counts only it writes, with plain stores, and a scrape sums them.
 * <p>
 * The client library's {@code Histogram} does four atomic read-modify-writes per
 * observation (its scrape buffer's counter, the bucket's, the sum's and the count's
 * {@code LongAdder}), and the event loops all observe the same few data points, once or
 * twice per content event: in a {@code fixed:100} churn profile that was 3.5 % of
 * event-loop time, nearly all of it in the count's compare-and-set. Here an observation
 * is a bucket search and two stores.
 * <p>
 * What a scrape shows is what the library's histogram shows for the same observations
 * (same names, labels, bucket edges, {@code +Inf} bucket), read without stopping the
 * writers: the count is the sum of the bucket counts read, so the two always agree; the
 * sum may miss an observation that is being recorded while it is read. The first
 * {@value #OWNED_CELLS} threads to observe a data point get cells of their own; any
 * thread after them shares one synchronized cell. NaN is ignored, as the library does.
 * <p>
 * An observation made with its request's trace may become its bucket's exemplar (trace
 * and span id, value, time), shown in the OpenMetrics exposition only: a bucket takes a
 * new one at most every {@link #EXEMPLAR_INTERVAL_NANOS}, claimed with one
 * compare-and-set, so an observation whose bucket has a recent exemplar pays one load and
 * a comparison, and allocates nothing.
 */
final class LoopHistogram implements Collector {

	/**
	 * Threads with a cell of their own per data point; event loops are about as many as
	 * cores.
	 */
	static final int OWNED_CELLS = 32;

	/** A bucket keeps its exemplar at least this long (5 s) before a newer one. */
	static final long EXEMPLAR_INTERVAL_NANOS = 5_000_000_000L;

	/** No exemplar yet. */
	private static final long NO_EXEMPLAR = Long.MIN_VALUE;

	private static final VarHandle TIMES = MethodHandles.arrayElementVarHandle(long[].class);

	private static final VarHandle EXEMPLARS = MethodHandles.arrayElementVarHandle(Exemplar[].class);

	private final MetricMetadata metadata;

	private final List<String> labelNames;

	private final double[] upperBounds;

	private final ConcurrentHashMap<List<String>, Series> series = new ConcurrentHashMap<>();

	private LoopHistogram(String name, String help, double[] edges, List<String> labelNames) {
		this.metadata = new MetricMetadata(name, help);
		this.labelNames = labelNames;
		this.upperBounds = Arrays.copyOf(edges, edges.length + 1);
		this.upperBounds[edges.length] = Double.POSITIVE_INFINITY;
	}

	/**
	 * Registers a histogram.
	 * @param registry the registry
	 * @param name the metric name
	 * @param help its help text
	 * @param edges the finite upper bounds, strictly increasing
	 * @param labelNames the label names
	 * @return the histogram
	 */
	static LoopHistogram register(PrometheusRegistry registry, String name, String help, double[] edges,
			String... labelNames) {
		LoopHistogram histogram = new LoopHistogram(name, help, edges, List.of(labelNames));
		registry.register(histogram);
		return histogram;
	}

	/**
	 * The data point of one tuple of label values, created on first use.
	 * @param values the label values, in label-name order
	 * @return the data point
	 */
	Series labelValues(String... values) {
		if (values.length != this.labelNames.size()) {
			throw new IllegalArgumentException(this.metadata.getName() + " has labels " + this.labelNames + " but got "
					+ values.length + " values");
		}
		return this.series.computeIfAbsent(List.of(values), this::newSeries);
	}

	private Series newSeries(List<String> values) {
		return new Series(this.upperBounds,
				Labels.of(this.labelNames.toArray(String[]::new), values.toArray(String[]::new)),
				System.currentTimeMillis());
	}

	@Override
	public String getPrometheusName() {
		return this.metadata.getPrometheusName();
	}

	@Override
	public HistogramSnapshot collect() {
		List<HistogramDataPointSnapshot> points = new ArrayList<>(this.series.size());
		for (Series s : this.series.values()) {
			points.add(s.snapshot());
		}
		return new HistogramSnapshot(this.metadata, points);
	}

	/** One data point: the cells of the threads that observed it. */
	static final class Series implements DistributionDataPoint {

		private final double[] upperBounds;

		private final Labels labels;

		private final long createdMillis;

		/** Copy-on-write; a thread's cell is appended under this object's lock. */
		private volatile Cell[] owned = new Cell[0];

		private final Cell shared;

		/** When each bucket's exemplar was taken (the observer's clock). */
		private final long[] exemplarNanos;

		private final Exemplar[] exemplars;

		Series(double[] upperBounds, Labels labels, long createdMillis) {
			this.upperBounds = upperBounds;
			this.labels = labels;
			this.createdMillis = createdMillis;
			this.shared = new Cell(null, upperBounds.length);
			this.exemplarNanos = new long[upperBounds.length];
			Arrays.fill(this.exemplarNanos, NO_EXEMPLAR);
			this.exemplars = new Exemplar[upperBounds.length];
		}

		@Override
		public void observe(double value) {
			if (Double.isNaN(value)) {
				return;
			}
			add(bucket(this.upperBounds, value), value);
		}

		/**
		 * Observes a value of a request's, which becomes its bucket's exemplar when the
		 * bucket's last one is older than {@link #EXEMPLAR_INTERVAL_NANOS}.
		 * @param value the value
		 * @param nowNanos the time of the observation, on any monotonic clock the series'
		 * observers share
		 * @param trace the request's trace, or null
		 */
		void observe(double value, long nowNanos, RequestTrace trace) {
			if (trace == null) {
				observe(value);
			}
			else {
				observe(value, nowNanos, trace.traceId(), trace.spanId());
			}
		}

		/**
		 * Observes a value of a trace's (see
		 * {@link #observe(double, long, RequestTrace)}).
		 * @param value the value
		 * @param nowNanos the time of the observation
		 * @param traceId the trace id, or null
		 */
		void observe(double value, long nowNanos, String traceId) {
			observe(value, nowNanos, traceId, null);
		}

		private void observe(double value, long nowNanos, String traceId, String spanId) {
			if (Double.isNaN(value)) {
				return;
			}
			int bucket = bucket(this.upperBounds, value);
			add(bucket, value);
			if (traceId != null && claimExemplar(bucket, nowNanos)) {
				keepExemplar(bucket, value, traceId, spanId);
			}
		}

		private boolean claimExemplar(int bucket, long nowNanos) {
			long last = (long) TIMES.getOpaque(this.exemplarNanos, bucket);
			return (last == NO_EXEMPLAR || nowNanos - last >= EXEMPLAR_INTERVAL_NANOS)
					&& TIMES.compareAndSet(this.exemplarNanos, bucket, last, nowNanos);
		}

		private void keepExemplar(int bucket, double value, String traceId, String spanId) {
			Exemplar.Builder exemplar = Exemplar.builder()
				.value(value)
				.traceId(traceId)
				.timestampMillis(System.currentTimeMillis());
			if (spanId != null) {
				exemplar.spanId(spanId);
			}
			EXEMPLARS.setRelease(this.exemplars, bucket, exemplar.build());
		}

		private void add(int bucket, double value) {
			Thread thread = Thread.currentThread();
			for (Cell cell : this.owned) {
				if (cell.owner == thread) {
					cell.add(bucket, value);
					return;
				}
			}
			Cell cell = cellOf(thread);
			if (cell != this.shared) {
				cell.add(bucket, value);
				return;
			}
			synchronized (cell) {
				cell.add(bucket, value);
			}
		}

		private synchronized Cell cellOf(Thread thread) {
			Cell[] cells = this.owned;
			for (Cell cell : cells) {
				if (cell.owner == thread) {
					return cell;
				}
			}
			if (cells.length == OWNED_CELLS) {
				return this.shared;
			}
			Cell cell = new Cell(thread, this.upperBounds.length);
			Cell[] grown = Arrays.copyOf(cells, cells.length + 1);
			grown[cells.length] = cell;
			this.owned = grown;
			return cell;
		}

		@Override
		public void observeWithExemplar(double value, Labels exemplarLabels) {
			observe(value);
		}

		@Override
		public long getCount() {
			long[] counts = counts();
			long count = 0;
			for (long c : counts) {
				count += c;
			}
			return count;
		}

		@Override
		public double getSum() {
			double sum = this.shared.sum();
			for (Cell cell : this.owned) {
				sum += cell.sum();
			}
			return sum;
		}

		private long[] counts() {
			long[] counts = new long[this.upperBounds.length];
			this.shared.addTo(counts);
			for (Cell cell : this.owned) {
				cell.addTo(counts);
			}
			return counts;
		}

		HistogramDataPointSnapshot snapshot() {
			return new HistogramDataPointSnapshot(ClassicHistogramBuckets.of(this.upperBounds, counts()), getSum(),
					this.labels, exemplars(), this.createdMillis);
		}

		private Exemplars exemplars() {
			List<Exemplar> taken = null;
			for (int i = 0; i < this.exemplars.length; i++) {
				Exemplar exemplar = (Exemplar) EXEMPLARS.getAcquire(this.exemplars, i);
				if (exemplar != null) {
					if (taken == null) {
						taken = new ArrayList<>();
					}
					taken.add(exemplar);
				}
			}
			return (taken != null) ? Exemplars.of(taken) : Exemplars.EMPTY;
		}

		/**
		 * The first bucket whose upper bound is at or above the value (the last is +Inf).
		 */
		static int bucket(double[] upperBounds, double value) {
			int low = 0;
			int high = upperBounds.length - 1;
			while (low < high) {
				int mid = (low + high) >>> 1;
				if (value <= upperBounds[mid]) {
					high = mid;
				}
				else {
					low = mid + 1;
				}
			}
			return low;
		}

	}

	/**
	 * One thread's counts. Written by that thread only (or under the series' shared
	 * cell's lock), read by scrapes: opaque accesses make each value whole and visible
	 * without a fence, which on x86 and ARM are plain loads and stores.
	 */
	static final class Cell {

		private static final VarHandle COUNTS = MethodHandles.arrayElementVarHandle(long[].class);

		private static final VarHandle SUM;

		static {
			try {
				SUM = MethodHandles.lookup().findVarHandle(Cell.class, "sum", double.class);
			}
			catch (ReflectiveOperationException ex) {
				throw new ExceptionInInitializerError(ex);
			}
		}

		final Thread owner;

		private final long[] counts;

		@SuppressWarnings("unused") // through SUM
		private double sum;

		Cell(Thread owner, int buckets) {
			this.owner = owner;
			this.counts = new long[buckets];
		}

		void add(int bucket, double value) {
			COUNTS.setOpaque(this.counts, bucket, (long) COUNTS.getOpaque(this.counts, bucket) + 1);
			SUM.setOpaque(this, (double) SUM.getOpaque(this) + value);
		}

		double sum() {
			return (double) SUM.getOpaque(this);
		}

		void addTo(long[] totals) {
			for (int i = 0; i < totals.length; i++) {
				totals[i] += (long) COUNTS.getOpaque(this.counts, i);
			}
		}

	}

}
