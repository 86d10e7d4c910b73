package dev.tokengap.bench;

import java.util.Arrays;

/**
 * Estimates a quantile from the cumulative buckets of a Prometheus histogram exactly as
 * PromQL's {@code histogram_quantile} does: find the bucket holding the rank, then
 * interpolate linearly within it (the lowest bucket starts at 0; a rank in the
 * {@code +Inf} bucket answers the highest finite edge).
 */
final class HistogramQuantile {

	private HistogramQuantile() {
	}

	/**
	 * @param q the quantile, 0 to 1
	 * @param upperBounds the {@code le} edges, ascending, the last one {@code +Inf}
	 * @param cumulativeCounts the count at or below each edge
	 * @return the estimate, NaN with no observations or fewer than two buckets
	 */
	static double estimate(double q, double[] upperBounds, double[] cumulativeCounts) {
		if (q < 0) {
			return Double.NEGATIVE_INFINITY;
		}
		if (q > 1) {
			return Double.POSITIVE_INFINITY;
		}
		int n = upperBounds.length;
		if (n < 2 || upperBounds[n - 1] != Double.POSITIVE_INFINITY) {
			return Double.NaN;
		}
		double[] counts = monotonic(cumulativeCounts);
		double observations = counts[n - 1];
		if (observations == 0) {
			return Double.NaN;
		}
		double rank = q * observations;
		int b = 0;
		while (b < n - 1 && counts[b] < rank) {
			b++;
		}
		if (b == n - 1) {
			return upperBounds[n - 2];
		}
		if (b == 0 && upperBounds[0] <= 0) {
			return upperBounds[0];
		}
		double start = 0;
		double end = upperBounds[b];
		double count = counts[b];
		if (b > 0) {
			start = upperBounds[b - 1];
			count -= counts[b - 1];
			rank -= counts[b - 1];
		}
		return start + (end - start) * (rank / count);
	}

	/**
	 * Prometheus forces cumulative counts to be non-decreasing (scrape races) before it
	 * searches them.
	 */
	private static double[] monotonic(double[] counts) {
		double[] fixed = Arrays.copyOf(counts, counts.length);
		for (int i = 1; i < fixed.length; i++) {
			fixed[i] = Math.max(fixed[i], fixed[i - 1]);
		}
		return fixed;
	}

}
