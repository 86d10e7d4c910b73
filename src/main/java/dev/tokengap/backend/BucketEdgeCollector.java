package dev.tokengap.backend;

import java.util.Arrays;

/**
 * The finite {@code le} values of one histogram's buckets, taken from the first series
 * seen (every {@code engine} or {@code pid} series of a histogram has the same edges).
 */
final class BucketEdgeCollector {

	private String series;

	private final StringBuilder key = new StringBuilder();

	private double[] edges = new double[32];

	private int count;

	void add(SampleLabels labels) {
		CharSequence le = null;
		this.key.setLength(0);
		for (int i = 0; i < labels.size(); i++) {
			if (TextSlice.contentEquals(labels.name(i), "le")) {
				le = labels.value(i);
			}
			else {
				this.key.append(labels.name(i)).append('\0').append(labels.value(i)).append('\0');
			}
		}
		if (le == null) {
			return;
		}
		if (this.series == null) {
			this.series = this.key.toString();
		}
		else if (!this.series.contentEquals(this.key)) {
			return;
		}
		double edge = NumberScanner.parse(le);
		if (Double.isFinite(edge)) {
			if (this.count == this.edges.length) {
				this.edges = Arrays.copyOf(this.edges, this.count * 2);
			}
			this.edges[this.count++] = edge;
		}
	}

	/**
	 * The distinct edges in increasing order.
	 * @return the edges, or {@code null} when no finite bucket was seen
	 */
	double[] edges() {
		if (this.count == 0) {
			return null;
		}
		double[] sorted = Arrays.copyOf(this.edges, this.count);
		Arrays.sort(sorted);
		int distinct = 1;
		for (int i = 1; i < sorted.length; i++) {
			if (sorted[i] != sorted[distinct - 1]) {
				sorted[distinct++] = sorted[i];
			}
		}
		return Arrays.copyOf(sorted, distinct);
	}

}
