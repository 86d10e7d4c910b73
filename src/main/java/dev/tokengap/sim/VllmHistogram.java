package dev.tokengap.sim;

/**
 * A Prometheus histogram with fixed edges, as vLLM declares it. Written by the engine
 * thread, read by scrapes; a short lock keeps buckets, sum and count consistent with each
 * other.
 */
final class VllmHistogram {

	record Snapshot(double[] edges, long[] cumulativeCounts, double sum, long count) {

	}

	private final double[] edges;

	private final long[] counts;

	private double sum;

	private long count;

	VllmHistogram(double... edges) {
		this.edges = edges.clone();
		this.counts = new long[edges.length + 1];
	}

	synchronized void observe(double value) {
		int bucket = 0;
		while (bucket < this.edges.length && value > this.edges[bucket]) {
			bucket++;
		}
		this.counts[bucket]++;
		this.sum += value;
		this.count++;
	}

	synchronized Snapshot snapshot() {
		long[] cumulative = new long[this.counts.length];
		long running = 0;
		for (int i = 0; i < this.counts.length; i++) {
			running += this.counts[i];
			cumulative[i] = running;
		}
		return new Snapshot(this.edges, cumulative, this.sum, this.count);
	}

}
