package dev.tokengap.metrics;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.context.properties.bind.Binder;

import dev.tokengap.testsupport.MetricsContract;
import dev.tokengap.testsupport.PrometheusText;
import dev.tokengap.testsupport.PrometheusText.Sample;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code docs/metrics-contract.md} against the series tokengap registers, both ways,
 * without a Spring context: {@link TokengapMeters} and {@link BackendMeters} on a real
 * registry with the default {@code tokengap.metrics} settings, every labelled series
 * given a data point (the client creates them per label set), scraped in the Prometheus
 * text format.
 * <ul>
 * <li>every contract series is registered, with the contract's type;</li>
 * <li>every registered series is in the contract;</li>
 * <li>labels: a series has those its row names ({@code x{a,b}}); the client-visible
 * latency and stall series also {@code model_name} (the contract's "Labels") and may have
 * {@code endpoint}; any other series has exactly those its row names;</li>
 * <li>bucket edges, where the contract gives them, are the contract's (plus
 * {@code +Inf}); a bucket family's (TTFT, ITL, REQUEST) are written exactly as the
 * default profile writes them.</li>
 * </ul>
 */
class MetricsContractTests {

	private static final long MS = 1_000_000;

	private static final MetricsContract CONTRACT = MetricsContract.load();

	/**
	 * The headings of the contract's sections whose series all carry {@code model_name}
	 * (its "Labels").
	 */
	private static final List<String> PER_MODEL_SECTIONS = List.of("Client-visible latency",
			"Stalls and smooth-stream goodput");

	private final PrometheusRegistry registry = new PrometheusRegistry();

	private final PrometheusText scrape = scrapeWithEverySeries();

	private final Map<String, String> types = types(this.scrape.text());

	@Test
	void everyContractSeriesIsRegisteredWithItsType() {
		List<String> disagreements = new ArrayList<>();
		CONTRACT.types().forEach((name, type) -> {
			String registered = this.types.get(name);
			if (!type.equals(registered)) {
				disagreements.add(name + ": the contract says " + type + ", "
						+ ((registered != null) ? "registered as " + registered : "not registered"));
			}
		});
		assertThat(CONTRACT.types()).isNotEmpty();
		assertThat(disagreements).isEmpty();
	}

	@Test
	void everyRegisteredSeriesIsInTheContract() {
		assertThat(this.types.keySet()).as("registered series with a data point")
			.hasSize(this.registry.scrape().size())
			.allSatisfy((name) -> assertThat(CONTRACT.types()).as("the contract has %s", name).containsKey(name));
	}

	@Test
	void everySeriesHasTheContractsLabels() {
		List<String> disagreements = new ArrayList<>();
		for (String name : CONTRACT.types().keySet()) {
			if (!this.types.containsKey(name)) {
				continue; // not registered at all:
							// everyContractSeriesIsRegisteredWithItsType says so
			}
			Set<String> registered = labelNames(name);
			Set<String> required = new TreeSet<>(CONTRACT.labels(name));
			Set<String> allowed = new TreeSet<>(required);
			if (PER_MODEL_SECTIONS.stream().anyMatch(CONTRACT.section(name)::startsWith)) {
				required.add("model_name");
				allowed.addAll(List.of("model_name", "endpoint"));
			}
			if (!registered.containsAll(required) || !allowed.containsAll(registered)) {
				disagreements.add(name + ": registered with " + registered + ", the contract asks for " + required
						+ ((allowed.equals(required)) ? "" : " (and allows " + allowed + ")"));
			}
		}
		assertThat(disagreements).isEmpty();
	}

	@Test
	void histogramsHaveTheContractsBucketEdges() {
		List<String> disagreements = new ArrayList<>();
		List<String> withoutEdges = new ArrayList<>();
		for (String name : CONTRACT.types().keySet()) {
			List<String> edges = CONTRACT.edges(name);
			if (edges.isEmpty()) {
				withoutEdges.add(name);
				continue;
			}
			List<String> exported = this.scrape.les(name);
			List<String> expected = new ArrayList<>(edges);
			expected.add("+Inf");
			boolean same = (CONTRACT.bucketFamily(name) != null) ? exported.equals(expected)
					: numbers(exported).equals(numbers(expected));
			if (!same) {
				disagreements.add(name + ": exported le " + exported + ", the contract's " + expected);
			}
		}
		assertThat(disagreements).isEmpty();
		assertThat(withoutEdges).filteredOn((name) -> CONTRACT.types().get(name).equals("histogram"))
			.as("histograms whose edges the contract does not give")
			.containsExactly("tokengap_backend_scrape_duration_seconds");
	}

	private PrometheusText scrapeWithEverySeries() {
		MetricsProperties defaults = new Binder().bindOrCreate("tokengap.metrics", MetricsProperties.class);
		TokengapMeters meters = new TokengapMeters(this.registry, defaults.edges(null), 400 * MS, () -> 0);
		TokengapMeters.registerBuildInfo(this.registry, "0.1.0", defaults.profileInUse(null));
		// The data points of one (model, endpoint) pair,
		// with the in-flight and stalled gauges' rows.
		meters.meters("m", Endpoint.CHAT_COMPLETIONS);
		meters.countRequest("m", Endpoint.CHAT_COMPLETIONS, 200);
		meters.recordSpike("m", "engine_other", "middle", 0.5, null);
		BackendMeters backend = new BackendMeters(this.registry);
		// A V0 engine's scrape: swapped is exported too.
		backend.scraped(1, 0, 0, 0.5, 0, 1, MS);
		backend.servedModels(Map.of("m", "m"), 20);
		return PrometheusText.scrape(this.registry);
	}

	/** The {@code # TYPE} lines: each series' name, as scraped, and its type. */
	private static Map<String, String> types(String text) {
		Map<String, String> types = new LinkedHashMap<>();
		for (String line : text.split("\n")) {
			if (line.startsWith("# TYPE ")) {
				String[] words = line.split(" ");
				types.put(words[2], words[3]);
			}
		}
		return types;
	}

	/** Label names of a series' samples ({@code le} aside). */
	private Set<String> labelNames(String name) {
		Set<String> names = new TreeSet<>();
		for (Sample sample : this.scrape.samples()) {
			if (sample.name().equals(name) || (sample.name().startsWith(name + "_")
					&& List.of("_bucket", "_count", "_sum").contains(sample.name().substring(name.length())))) {
				names.addAll(sample.labels().keySet());
			}
		}
		names.remove("le");
		return names;
	}

	private static List<Double> numbers(List<String> values) {
		return values.stream().map((v) -> v.equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(v)).toList();
	}

}
