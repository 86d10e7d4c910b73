package dev.tokengap.deploy;

import java.util.Set;
import java.util.TreeSet;

import dev.tokengap.sim.SimulatorProperties;
import dev.tokengap.sim.SimulatorServer;
import dev.tokengap.testsupport.PrometheusText;

/**
 * The vLLM series names the built-in simulator exports (as vLLM does), read once from its
 * real {@code /metrics}.
 */
final class SimulatorSeries {

	/**
	 * vLLM series the dashboards read that the simulator does not export: older names
	 * read through an {@code or} fallback, and families of real engines the simulator
	 * does not model. A panel reading one says so in its description (it mentions
	 * "simulator"), and against the simulator it is empty.
	 */
	static final Set<String> NOT_SIMULATED = Set.of("vllm:time_per_output_token_seconds_bucket",
			"vllm:gpu_cache_usage_perc");

	private static Set<String> names;

	private SimulatorSeries() {
	}

	static synchronized Set<String> names() {
		if (names == null) {
			names = scrape();
		}
		return names;
	}

	private static Set<String> scrape() {
		// With drafts: the spec_decode series exist only on an engine that drafts,
		// as in vLLM.
		SimulatorProperties drafting = SimulatorProperties.defaults().toBuilder().numSpeculativeTokens(1).build();
		try (SimulatorServer simulator = SimulatorServer.start(drafting, "127.0.0.1", 0)) {
			Set<String> series = new TreeSet<>();
			PrometheusText.get(simulator.port(), "/metrics")
				.lines()
				.filter((line) -> line.startsWith("vllm:"))
				.forEach((line) -> {
					int end = line.indexOf('{');
					series.add(line.substring(0, (end > 0) ? end : line.indexOf(' ')));
				});
			return series;
		}
	}

}
