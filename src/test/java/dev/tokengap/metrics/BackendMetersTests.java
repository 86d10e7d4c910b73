package dev.tokengap.metrics;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.InfoSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class BackendMetersTests {

	private final PrometheusRegistry registry = new PrometheusRegistry();

	private final BackendMeters meters = new BackendMeters(this.registry);

	@Test
	void modelInfoFollowsTheEnginesListAndForgetsWhatItNoLongerServes() {
		this.meters.servedModels(Map.of("base", "base", "sql", "base"), 20);
		assertThat(modelInfo()).containsExactlyInAnyOrder("base=base", "sql=base");
		this.meters.servedModels(Map.of("base", "base", "alias", "base"), 20);
		assertThat(modelInfo()).containsExactlyInAnyOrder("base=base", "alias=base");
	}

	@Test
	void modelInfoIsCappedLikeModelLabels() {
		Map<String, String> many = new LinkedHashMap<>();
		for (int i = 0; i < 30; i++) {
			many.put("adapter-" + i, "base");
		}
		this.meters.servedModels(many, 20);
		assertThat(modelInfo()).hasSize(20).contains("adapter-0=base").doesNotContain("adapter-20=base");
	}

	private List<String> modelInfo() {
		for (MetricSnapshot snapshot : this.registry.scrape()) {
			// The client keeps an info metric's name without the _info suffix it writes.
			if (snapshot instanceof InfoSnapshot
					&& (snapshot.getMetadata().getName() + "_info").equals(BackendMeters.MODEL_INFO)) {
				return ((InfoSnapshot) snapshot).getDataPoints()
					.stream()
					.map((point) -> point.getLabels().get("model_name") + "="
							+ point.getLabels().get("engine_model_name"))
					.toList();
			}
		}
		return List.of();
	}

}
