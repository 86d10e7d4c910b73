package dev.tokengap.metrics;

import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class BucketEdgesTests {

	@Test
	void profilesAreVllmsEdges() {
		assertThat(BucketEdges.profile("vllm-v1").ttft()).hasSize(22).endsWith(640.0, 2560.0);
		assertThat(BucketEdges.profile("vllm-v1").itl()).hasSize(19).endsWith(80.0);
		assertThat(BucketEdges.profile("vllm-v1").request()).hasSize(21).startsWith(0.3).endsWith(7680.0);
		assertThat(BucketEdges.profile("vllm-v0").ttft()).hasSize(16).endsWith(10.0);
		assertThat(BucketEdges.profile("vllm-v0").itl()).hasSize(13).endsWith(2.5);
		assertThat(BucketEdges.profile("vllm-v0").request()).containsExactly(1.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0,
				40.0, 50.0, 60.0);
	}

	@Test
	void rejectsAnUnknownProfileNamingTheValidOnes() {
		assertThatIllegalArgumentException().isThrownBy(() -> BucketEdges.profile("vllm-v2"))
			.withMessageContaining("vllm-v1, vllm-v0 or auto");
	}

	@Test
	void overridesOnlyTheGivenFamilies() {
		BucketEdges edges = BucketEdges.VLLM_V1.override(null, List.of(0.05, 0.1), List.of());
		assertThat(edges.itl()).containsExactly(0.05, 0.1);
		assertThat(edges.ttft()).isEqualTo(BucketEdges.VLLM_V1.ttft());
		assertThat(edges.request()).isEqualTo(BucketEdges.VLLM_V1.request());
	}

	@Test
	void rejectsEdgesThatAreNotStrictlyIncreasing() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> BucketEdges.VLLM_V1.override(null, List.of(0.1, 0.1), null))
			.withMessageContaining("strictly increasing");
	}

	@Test
	void rejectsNonPositiveEdges() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> BucketEdges.VLLM_V1.override(List.of(0.0, 1.0), null, null))
			.withMessageContaining("positive");
	}

	@Test
	void isImmutable() {
		double[] itl = BucketEdges.VLLM_V1.itl();
		itl[0] = 99;
		assertThat(BucketEdges.VLLM_V1.itl()[0]).isEqualTo(0.01);
	}

}
