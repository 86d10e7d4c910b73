package dev.tokengap.deploy;

import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.PodSpec;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The shutdown arithmetic of an injected pod, checked against helm/tokengap's defaults:
 * tokengap pauses (preStop), drains, and the JVM exits within the grace period; the
 * engine pauses for tokengap's pause plus its drain, so the streams being drained still
 * have their engine.
 */
final class ShutdownOrder {

	private ShutdownOrder() {
	}

	static void assertMirrorsTheChart(PodSpec pod, Container tokengap, int enginePause) {
		int preStop = Integer.parseInt(InjectedPods.sleep(tokengap));
		int drain = drainSeconds(tokengap, Map.of());
		int grace = pod.getTerminationGracePeriodSeconds().intValue();
		assertThat(enginePause).as("the engine outlives tokengap's pause and drain").isEqualTo(preStop + drain);
		assertThat(grace).as("the kubelet waits for the drain and the JVM's exit").isGreaterThan(preStop + drain);

		Map<String, Object> chartPod = ChartTests.render().podSpec();
		assertThat(grace).as("helm/tokengap's grace period").isEqualTo(chartPod.get("terminationGracePeriodSeconds"));
		assertThat(chartPreStop(chartPod, "tokengap")).isEqualTo(String.valueOf(preStop));
		assertThat(chartPreStop(chartPod, "vllm")).isEqualTo(String.valueOf(enginePause));
	}

	/** spring.lifecycle.timeout-per-shutdown-phase, in seconds. */
	static int drainSeconds(Container tokengap, Map<String, String> annotations) {
		String phase = InjectedPods.env(tokengap, annotations).get("SPRING_LIFECYCLE_TIMEOUTPERSHUTDOWNPHASE");
		assertThat(phase).matches("\\d+s");
		return Integer.parseInt(phase.substring(0, phase.length() - 1));
	}

	@SuppressWarnings("unchecked")
	private static String chartPreStop(Map<String, Object> pod, String name) {
		Map<String, Object> container = ChartTests.list(pod, "containers")
			.stream()
			.filter((c) -> name.equals(c.get("name")))
			.findFirst()
			.orElseThrow();
		Map<String, Object> exec = ChartTests.map(ChartTests.map(ChartTests.map(container, "lifecycle"), "preStop"),
				"exec");
		return ((List<String>) exec.get("command")).get(1);
	}

}
