package dev.tokengap.bench;

import java.util.Arrays;
import java.util.Locale;

/**
 * Mean and percentiles of a set of values, percentiles interpolated linearly between
 * closest ranks as {@code numpy.percentile} (and so {@code vllm bench serve}) computes
 * them.
 *
 * @param count values
 * @param mean their mean, NaN when there are none
 * @param p50 median
 * @param p90 90th percentile
 * @param p95 95th percentile
 * @param p99 99th percentile
 * @param max the largest
 */
record Distribution(int count, double mean, double p50, double p90, double p95, double p99, double max) {

	static final Distribution EMPTY = new Distribution(0, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN,
			Double.NaN);

	/** Summarises {@code values[0..count)}; sorts that range in place. */
	static Distribution of(double[] values, int count) {
		if (count == 0) {
			return EMPTY;
		}
		Arrays.sort(values, 0, count);
		double sum = 0;
		for (int i = 0; i < count; i++) {
			sum += values[i];
		}
		return new Distribution(count, sum / count, percentile(values, count, 50), percentile(values, count, 90),
				percentile(values, count, 95), percentile(values, count, 99), values[count - 1]);
	}

	static Distribution of(double[] values) {
		return of(values, values.length);
	}

	/** numpy's default ("linear") percentile of a sorted range. */
	static double percentile(double[] sorted, int count, double percent) {
		double rank = percent / 100 * (count - 1);
		int below = (int) Math.floor(rank);
		int above = Math.min(below + 1, count - 1);
		double fraction = rank - below;
		return sorted[below] + (sorted[above] - sorted[below]) * fraction;
	}

	/**
	 * A distribution-free 95 % confidence interval of the {@code percent} percentile of
	 * what a sorted sample was drawn from: the order statistics at the ranks
	 * {@code n q -+ 1.96 sqrt(n q (1 - q))} (the normal approximation of the binomial
	 * count of values below the percentile), clamped to the sample. With 60 values the
	 * p99's interval runs from the 57th value to the largest.
	 * @return {low, high}, NaN with no values
	 */
	static double[] confidence95(double[] sorted, double percent) {
		int n = sorted.length;
		if (n == 0) {
			return new double[] { Double.NaN, Double.NaN };
		}
		double q = percent / 100;
		double spread = 1.96 * Math.sqrt(n * q * (1 - q));
		int low = (int) Math.floor(n * q - spread);
		int high = (int) Math.ceil(n * q + spread) + 1;
		return new double[] { sorted[Math.max(1, Math.min(n, low)) - 1], sorted[Math.max(1, Math.min(n, high)) - 1] };
	}

	/**
	 * The Wilson score 95 % confidence interval of a share {@code k / n}.
	 * @return {low, high}, NaN when {@code n} is 0
	 */
	static double[] wilson95(int k, int n) {
		if (n == 0) {
			return new double[] { Double.NaN, Double.NaN };
		}
		double z = 1.96;
		double p = (double) k / n;
		double center = (p + z * z / (2 * n)) / (1 + z * z / n);
		double half = z * Math.sqrt(p * (1 - p) / n + z * z / (4.0 * n * n)) / (1 + z * z / n);
		return new double[] { Math.max(0, center - half), Math.min(1, center + half) };
	}

	static String format(double value) {
		if (Double.isNaN(value)) {
			return "-";
		}
		if (Double.isInfinite(value)) {
			return "inf";
		}
		return String.format(Locale.ROOT, "%.2f", value);
	}

}
