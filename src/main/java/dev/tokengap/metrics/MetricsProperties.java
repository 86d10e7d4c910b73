package dev.tokengap.metrics;

import java.util.List;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Metrics settings ({@code tokengap.metrics.*}).
 *
 * @param buckets bucket profile: {@code vllm-v1}, {@code vllm-v0} or {@code auto}
 * @param ttftBuckets explicit TTFT edges, replacing the profile's
 * @param itlBuckets explicit ITL edges, replacing the profile's
 * @param requestBuckets explicit end-to-end edges, replacing the profile's
 * @param models model names always allowed as {@code model_name} values, besides those
 * the backend's {@code /v1/models} lists
 * @param maxModels most distinct {@code model_name} values; the rest are {@code other}
 */
@ConfigurationProperties("tokengap.metrics")
public record MetricsProperties(@DefaultValue("vllm-v1") String buckets, List<Double> ttftBuckets,
		List<Double> itlBuckets, List<Double> requestBuckets, @DefaultValue List<String> models,
		@DefaultValue("20") int maxModels) {

	public MetricsProperties {
		if (buckets == null || buckets.isBlank()) {
			throw new IllegalArgumentException("tokengap.metrics.buckets must not be blank");
		}
		if (maxModels < 1) {
			throw new IllegalArgumentException("tokengap.metrics.max-models must be at least 1, got " + maxModels);
		}
	}

	/**
	 * Names the edges in use, for {@code tokengap_build_info}: {@code custom} when any
	 * family is given explicitly, {@code vllm-v1} when {@code auto} could not read the
	 * engine's edges.
	 * @param autoEdges the edges read from the backend, or null
	 * @return the profile name
	 */
	public String profileInUse(BucketEdges autoEdges) {
		if (given(this.ttftBuckets) || given(this.itlBuckets) || given(this.requestBuckets)) {
			return "custom";
		}
		return ("auto".equals(this.buckets) && autoEdges == null) ? "vllm-v1" : this.buckets;
	}

	private static boolean given(List<Double> edges) {
		return edges != null && !edges.isEmpty();
	}

	/**
	 * Resolves the edges from the profile and the per-family overrides.
	 * @param autoEdges the edges read from the backend, used when the profile is
	 * {@code auto}
	 * @return the edges in use
	 */
	public BucketEdges edges(BucketEdges autoEdges) {
		BucketEdges base = ("auto".equals(this.buckets) && autoEdges != null) ? autoEdges
				: BucketEdges.profile("auto".equals(this.buckets) ? "vllm-v1" : this.buckets);
		return base.override(this.ttftBuckets, this.itlBuckets, this.requestBuckets);
	}

}
