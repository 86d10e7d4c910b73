package dev.tokengap.bench;

import java.util.Map;
import java.util.TreeMap;

import dev.tokengap.backend.PrometheusTextParser;
import dev.tokengap.backend.SampleLabels;

/**
 * The cumulative bucket counts of the histograms one scrape showed, summed over every
 * label but {@code le} (PromQL's {@code sum by (le)}), so two scrapes give the buckets of
 * what happened between them. Optionally only the series with one label value count
 * ({@code sum by (le) (…{endpoint="responses"})}).
 */
final class HistogramSnapshot {

	private final Map<String, TreeMap<Double, Double>> byName;

	private HistogramSnapshot(Map<String, TreeMap<Double, Double>> byName) {
		this.byName = byName;
	}

	static HistogramSnapshot parse(String exposition) {
		return parse(exposition, null, null);
	}

	/**
	 * Parses the buckets of the series whose {@code label} is {@code value}.
	 * @param label the label to select by, or null for every series
	 * @param value the value it must have
	 */
	static HistogramSnapshot parse(String exposition, String label, String value) {
		Map<String, TreeMap<Double, Double>> byName = new TreeMap<>();
		new PrometheusTextParser().parse(exposition, (name, labels, sampleValue, timestamp) -> {
			String sample = name.toString();
			CharSequence le = labels.get("le");
			if (!sample.endsWith("_bucket") || le == null || !selected(labels, label, value)) {
				return;
			}
			String family = sample.substring(0, sample.length() - "_bucket".length());
			double edge = Double.parseDouble(le.toString().replace("Inf", "Infinity"));
			byName.computeIfAbsent(family, (k) -> new TreeMap<>()).merge(edge, sampleValue, Double::sum);
		});
		return new HistogramSnapshot(byName);
	}

	private static boolean selected(SampleLabels labels, String label, String value) {
		if (label == null) {
			return true;
		}
		CharSequence actual = labels.get(label);
		return actual != null && value.contentEquals(actual);
	}

	static HistogramSnapshot empty() {
		return new HistogramSnapshot(Map.of());
	}

	boolean has(String family) {
		return this.byName.containsKey(family);
	}

	/**
	 * Estimates a quantile of what was observed between {@code before} and this snapshot.
	 * @return seconds, NaN when the histogram is missing or saw nothing in between
	 */
	double quantileSince(HistogramSnapshot before, String family, double q) {
		TreeMap<Double, Double> now = this.byName.get(family);
		if (now == null) {
			return Double.NaN;
		}
		TreeMap<Double, Double> then = before.byName.getOrDefault(family, new TreeMap<>());
		double[] edges = new double[now.size()];
		double[] counts = new double[now.size()];
		int i = 0;
		for (Map.Entry<Double, Double> bucket : now.entrySet()) {
			edges[i] = bucket.getKey();
			// A counter reset (a restart between the scrapes)
			// leaves the later counts as they are.
			double earlier = then.getOrDefault(bucket.getKey(), 0.0);
			counts[i++] = (earlier <= bucket.getValue()) ? bucket.getValue() - earlier : bucket.getValue();
		}
		return HistogramQuantile.estimate(q, edges, counts);
	}

	/**
	 * The {@code le} edges of a histogram, ascending, {@code +Inf} last; empty when
	 * missing.
	 */
	double[] edges(String family) {
		TreeMap<Double, Double> buckets = this.byName.get(family);
		return (buckets == null) ? new double[0] : buckets.keySet().stream().mapToDouble(Double::doubleValue).toArray();
	}

	/** Observations between {@code before} and this snapshot. */
	double countSince(HistogramSnapshot before, String family) {
		TreeMap<Double, Double> now = this.byName.get(family);
		if (now == null || now.isEmpty()) {
			return 0;
		}
		TreeMap<Double, Double> then = before.byName.get(family);
		double earlier = (then == null || then.isEmpty()) ? 0 : then.lastEntry().getValue();
		return now.lastEntry().getValue() - earlier;
	}

}
