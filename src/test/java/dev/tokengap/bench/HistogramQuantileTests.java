package dev.tokengap.bench;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * The estimator against values worked out by hand from PromQL's histogram_quantile rules.
 */
class HistogramQuantileTests {

	private static final double INF = Double.POSITIVE_INFINITY;

	private static final double[] EDGES = { 0.1, 0.5, 1, INF };

	private static final double[] COUNTS = { 10, 60, 90, 100 };

	@Test
	void interpolatesLinearlyWithinTheBucketHoldingTheRank() {
		// rank 50 is in (0.1, 0.5], which holds 50 of which 40 are below the rank: 0.1 +
		// 0.4 * 40/50
		assertThat(HistogramQuantile.estimate(0.5, EDGES, COUNTS)).isCloseTo(0.42, within(1e-12));
		// rank 5 in the first bucket, which starts at 0: 0.1 * 5/10
		assertThat(HistogramQuantile.estimate(0.05, EDGES, COUNTS)).isCloseTo(0.05, within(1e-12));
		// rank 90 is exactly the top of (0.5, 1]
		assertThat(HistogramQuantile.estimate(0.9, EDGES, COUNTS)).isCloseTo(1.0, within(1e-12));
		// rank 75: 0.5 + 0.5 * 15/30
		assertThat(HistogramQuantile.estimate(0.75, EDGES, COUNTS)).isCloseTo(0.75, within(1e-12));
	}

	@Test
	void aRankInTheInfBucketAnswersTheHighestFiniteEdge() {
		assertThat(HistogramQuantile.estimate(0.99, EDGES, COUNTS)).isEqualTo(1.0);
	}

	@Test
	void noObservationsOrNoInfBucketIsNaN() {
		assertThat(HistogramQuantile.estimate(0.5, EDGES, new double[4])).isNaN();
		assertThat(HistogramQuantile.estimate(0.5, new double[] { 0.1, 0.5 }, new double[] { 1, 2 })).isNaN();
		assertThat(HistogramQuantile.estimate(0.5, new double[] { INF }, new double[] { 3 })).isNaN();
	}

	@Test
	void quantilesOutsideZeroToOneAreInfinite() {
		assertThat(HistogramQuantile.estimate(-0.1, EDGES, COUNTS)).isEqualTo(Double.NEGATIVE_INFINITY);
		assertThat(HistogramQuantile.estimate(1.1, EDGES, COUNTS)).isEqualTo(INF);
	}

	@Test
	void nonMonotonicCountsAreForcedUpAsPrometheusDoes() {
		// counts become 10, 10, 20: rank 10 is reached in the first bucket, at its top
		assertThat(HistogramQuantile.estimate(0.5, new double[] { 1, 2, INF }, new double[] { 10, 8, 20 }))
			.isCloseTo(1.0, within(1e-12));
	}

	@Test
	void aSnapshotDeltaIsSummedOverLabelsByLe() {
		String before = """
				# TYPE x_seconds histogram
				x_seconds_bucket{model_name="a",le="0.1"} 5.0
				x_seconds_bucket{model_name="a",le="0.5"} 5.0
				x_seconds_bucket{model_name="a",le="1.0"} 5.0
				x_seconds_bucket{model_name="a",le="+Inf"} 5.0
				""";
		String after = """
				# TYPE x_seconds histogram
				x_seconds_bucket{model_name="a",le="0.1"} 10.0
				x_seconds_bucket{model_name="a",le="0.5"} 40.0
				x_seconds_bucket{model_name="a",le="1.0"} 60.0
				x_seconds_bucket{model_name="a",le="+Inf"} 65.0
				x_seconds_bucket{model_name="b",le="0.1"} 5.0
				x_seconds_bucket{model_name="b",le="0.5"} 25.0
				x_seconds_bucket{model_name="b",le="1.0"} 35.0
				x_seconds_bucket{model_name="b",le="+Inf"} 40.0
				x_seconds_count{model_name="b"} 40.0
				""";
		HistogramSnapshot then = HistogramSnapshot.parse(before);
		HistogramSnapshot now = HistogramSnapshot.parse(after);
		// deltas summed by le: 10, 60, 90, 100, as in the tests above
		assertThat(now.quantileSince(then, "x_seconds", 0.5)).isCloseTo(0.42, within(1e-12));
		assertThat(now.countSince(then, "x_seconds")).isEqualTo(100);
		assertThat(now.edges("x_seconds")).containsExactly(0.1, 0.5, 1.0, INF);
		assertThat(now.quantileSince(then, "missing_seconds", 0.5)).isNaN();
	}

}
