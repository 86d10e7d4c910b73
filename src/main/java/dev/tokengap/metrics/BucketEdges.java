package dev.tokengap.metrics;

import java.util.Arrays;
import java.util.List;

/**
 * The bucket edges of the three histogram families that tokengap shares with vLLM.
 *
 * <p>
 * Edges are compared with vLLM's bucket by bucket, so they are kept exactly as given: no
 * rounding, no extra edges (the {@code +Inf} bucket is implicit).
 *
 * @param ttft time to first token (and first byte)
 * @param itl inter-token latency, time per output token, worst gap and spike gaps
 * @param request end-to-end request latency
 */
public record BucketEdges(double[] ttft, double[] itl, double[] request) {

	static final double[] V1_TTFT = { 0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0,
			7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0 };

	static final double[] V1_ITL = { 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
			10.0, 20.0, 40.0, 80.0 };

	static final double[] V1_REQUEST = { 0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0,
			60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0 };

	static final double[] V0_TTFT = { 0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0,
			7.5, 10.0 };

	static final double[] V0_ITL = { 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5 };

	static final double[] V0_REQUEST = { 1.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0 };

	/** vLLM's edges since the V1 engine (April 2025); the default. */
	public static final BucketEdges VLLM_V1 = new BucketEdges(V1_TTFT, V1_ITL, V1_REQUEST);

	/** vLLM 0.6.x edges. */
	public static final BucketEdges VLLM_V0 = new BucketEdges(V0_TTFT, V0_ITL, V0_REQUEST);

	/** Edges of {@code tokengap_stream_jitter_ratio} (no vLLM counterpart). */
	public static final double[] JITTER = { 1, 1.25, 1.5, 2, 3, 5, 10, 20, 50, 100 };

	/** Edges of {@code tokengap_proxy_write_delay_seconds} (no vLLM counterpart). */
	public static final double[] WRITE_DELAY = { 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
			0.25, 0.5, 1, 2.5 };

	public BucketEdges {
		ttft = validated("ttft", ttft);
		itl = validated("itl", itl);
		request = validated("request", request);
	}

	/**
	 * Returns the named profile ({@code vllm-v1} or {@code vllm-v0}).
	 * @param name the profile name
	 * @return the profile's edges
	 * @throws IllegalArgumentException for any other name
	 */
	public static BucketEdges profile(String name) {
		return switch (name) {
			case "vllm-v1" -> VLLM_V1;
			case "vllm-v0" -> VLLM_V0;
			default -> throw new IllegalArgumentException(
					"Unknown bucket profile '" + name + "': expected vllm-v1, vllm-v0 or auto");
		};
	}

	/**
	 * Returns a copy with the given families replaced when their lists are non-empty.
	 * @param ttft replacement TTFT edges, or null/empty to keep
	 * @param itl replacement ITL edges, or null/empty to keep
	 * @param request replacement request edges, or null/empty to keep
	 * @return the merged edges
	 */
	public BucketEdges override(List<Double> ttft, List<Double> itl, List<Double> request) {
		return new BucketEdges(pick(ttft, this.ttft), pick(itl, this.itl), pick(request, this.request));
	}

	private static double[] pick(List<Double> given, double[] fallback) {
		return (given == null || given.isEmpty()) ? fallback
				: given.stream().mapToDouble(Double::doubleValue).toArray();
	}

	static double[] validated(String family, double[] edges) {
		if (edges == null || edges.length == 0) {
			throw new IllegalArgumentException(family + " bucket edges must not be empty");
		}
		for (int i = 0; i < edges.length; i++) {
			if (!(edges[i] > 0) || Double.isInfinite(edges[i])) {
				throw new IllegalArgumentException(
						family + " bucket edges must be positive and finite, got " + edges[i]);
			}
			if (i > 0 && edges[i] <= edges[i - 1]) {
				throw new IllegalArgumentException(family + " bucket edges must be strictly increasing, got "
						+ edges[i - 1] + " then " + edges[i]);
			}
		}
		return edges.clone();
	}

	@Override
	public double[] ttft() {
		return this.ttft.clone();
	}

	@Override
	public double[] itl() {
		return this.itl.clone();
	}

	@Override
	public double[] request() {
		return this.request.clone();
	}

	@Override
	public boolean equals(Object other) {
		return other instanceof BucketEdges that && Arrays.equals(this.ttft, that.ttft)
				&& Arrays.equals(this.itl, that.itl) && Arrays.equals(this.request, that.request);
	}

	@Override
	public int hashCode() {
		return Arrays.hashCode(this.ttft) * 31 * 31 + Arrays.hashCode(this.itl) * 31 + Arrays.hashCode(this.request);
	}

	@Override
	public String toString() {
		return "ttft=" + Arrays.toString(this.ttft) + ", itl=" + Arrays.toString(this.itl) + ", request="
				+ Arrays.toString(this.request);
	}

}
