package dev.tokengap.deploy;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

import dev.tokengap.deploy.Dashboards.Dashboard;
import dev.tokengap.deploy.Dashboards.Query;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Grafana dashboards of {@code grafana/}: current schema, the datasource, namespace, pod,
 * model_name and endpoint variables used by every query whose series carry those labels, only series
 * of the metrics contract or vLLM's, and the panels issue #4 and contract version 2 ask for.
 * (PrometheusContainerTests runs every query against real series.)
 */
class DashboardTests {

	static final String STREAMING = "streaming-latency.json";

	static final String ATTRIBUTION = "spike-attribution.json";

	/** The matchers of every client-side selector: the contract puts model_name and endpoint on them. */
	static final String CLIENT_FILTER = "namespace=~\"$namespace\", pod=~\"$pod\", model_name=~\"$model_name\", endpoint=~\"$endpoint\"";

	/** Engine-side failure outcomes (contract v2). */
	static final String ENGINE_FAILURES = "outcome=~\"engine_error|rejected|upstream_error|upstream_timeout\"";

	/** The goodput denominator (contract v2): every stream except the client's own doing. */
	static final String GOODPUT_STREAMS = "rate(tokengap_streams_total{" + CLIENT_FILTER
			+ ", outcome!~\"client_cancelled|invalid\"}[";

	@Test
	void theTwoDashboardsUseTheCurrentSchemaAndSharedCrosshair() {
		List<Dashboard> dashboards = Dashboards.load();
		assertThat(dashboards).extracting(Dashboard::name).containsExactly(ATTRIBUTION, STREAMING);
		Set<String> uids = new HashSet<>();
		for (Dashboard dashboard : dashboards) {
			JsonNode json = dashboard.json();
			assertThat(json.path("schemaVersion").asInt()).as(dashboard.name()).isGreaterThanOrEqualTo(39);
			assertThat(uids.add(json.path("uid").asString())).as("unique uid").isTrue();
			assertThat(json.path("title").asString()).startsWith("tokengap / ");
			assertThat(json.path("graphTooltip").asInt()).as("shared crosshair: one time axis").isEqualTo(1);
			assertThat(json.path("id").isNull()).as("no database id in a provisioned dashboard").isTrue();
		}
	}

	@Test
	void everyDashboardHasTheDatasourceNamespacePodModelAndEndpointVariables() {
		for (Dashboard dashboard : Dashboards.load()) {
			Map<String, JsonNode> variables = dashboard.variables()
				.stream()
				.collect(Collectors.toMap((v) -> v.path("name").asString(), (v) -> v));
			assertThat(variables.keySet()).as(dashboard.name())
				.containsExactlyInAnyOrder("datasource", "namespace", "pod", "model_name", "endpoint");
			assertThat(variables.get("datasource").path("type").asString()).isEqualTo("datasource");
			assertThat(variables.get("datasource").path("query").asString()).isEqualTo("prometheus");
			for (String name : List.of("namespace", "pod", "model_name", "endpoint")) {
				JsonNode variable = variables.get(name);
				assertThat(variable.path("type").asString()).as(name).isEqualTo("query");
				assertThat(variable.path("datasource").path("uid").asString()).isEqualTo("${datasource}");
				assertThat(variable.path("includeAll").asBoolean()).as(name).isTrue();
				assertThat(variable.path("allValue").asString()).as("All matches series without the label")
					.isEqualTo(".*");
				assertThat(Dashboards.variableQuery(variable)).startsWith("label_values(tokengap_requests_total")
					.endsWith(", " + name + ")");
			}
		}
	}

	@Test
	void everyPanelQueriesTheDatasourceVariableWithUniqueIdsAndRefIds() {
		for (Dashboard dashboard : Dashboards.load()) {
			Set<Integer> ids = new HashSet<>();
			for (JsonNode panel : dashboard.panels()) {
				String title = dashboard.name() + " / " + panel.path("title").asString();
				assertThat(ids.add(panel.path("id").asInt())).as("unique id: %s", title).isTrue();
				JsonNode grid = panel.path("gridPos");
				assertThat(grid.path("x").asInt() + grid.path("w").asInt()).as(title).isLessThanOrEqualTo(24);
				assertThat(panel.path("datasource").path("uid").asString()).as(title).isEqualTo("${datasource}");
				assertThat(panel.path("description").asString()).as("%s explains itself", title).isNotBlank();
				assertThat(panel.path("targets").size()).as(title).isPositive();
				Set<String> refIds = new HashSet<>();
				for (JsonNode target : panel.path("targets")) {
					assertThat(refIds.add(target.path("refId").asString())).as(title).isTrue();
					assertThat(target.path("expr").asString("")).as(title).isNotBlank();
					assertThat(target.path("datasource").path("uid").asString()).as(title).isEqualTo("${datasource}");
				}
			}
		}
	}

	@Test
	void everySeriesIsInTheMetricsContractOrVllms() {
		MetricsContract contract = MetricsContract.load();
		for (Dashboard dashboard : Dashboards.load()) {
			for (Query query : dashboard.queries()) {
				assertThat(PromQl.series(query.expr())).as(query.origin()).isNotEmpty();
				for (String series : PromQl.series(query.expr())) {
					if (series.startsWith("tokengap_")) {
						assertThat(contract.familyOf(series)).as("%s: %s is in docs/metrics-contract.md",
								query.origin(), series)
							.isNotNull();
					}
					else {
						assertThat(SimulatorSeries.names()).as("%s: %s is a vLLM series", query.origin(), series)
							.contains(series);
					}
				}
			}
		}
	}

	@Test
	void everySelectorIsFilteredByTheVariablesItsSeriesCarry() {
		for (Dashboard dashboard : Dashboards.load()) {
			for (Query query : dashboard.queries()) {
				List<Map.Entry<String, String>> selectors = PromQl.selectors(query.expr());
				assertThat(selectors).as(query.origin()).isNotEmpty();
				for (Map.Entry<String, String> selector : selectors) {
					String series = selector.getKey();
					String matchers = selector.getValue();
					String where = query.origin() + ": " + series;
					assertThat(matchers).as(where).contains("namespace=~\"$namespace\"");
					if (series.startsWith("vllm:")) {
						// In standalone mode the engine runs in other pods: vLLM is filtered by model only
						// (it has no endpoint label).
						assertThat(matchers).as(where).contains("model_name=~\"$model_name\"")
							.doesNotContain("pod=", "endpoint=");
					}
					else if (series.startsWith("tokengap_backend_") || series.startsWith("tokengap_recording_errors_")) {
						// The engine mirror and tokengap's own health are per pod: no model_name, no endpoint.
						assertThat(matchers).as(where).contains("pod=~\"$pod\"").doesNotContain("model_name", "endpoint");
					}
					else if (series.startsWith("tokengap_gap_spike_")) {
						// Spikes carry model_name and cause (contract v2), no endpoint.
						assertThat(matchers).as(where).contains("pod=~\"$pod\"", "model_name=~\"$model_name\"")
							.doesNotContain("endpoint");
					}
					else {
						assertThat(matchers).as(where).contains(CLIENT_FILTER);
					}
				}
			}
		}
	}

	@Test
	void streamingLatencyOverlaysTheEnginesHistogramsAndShowsStallsGoodputAndStreamShape() {
		Dashboard dashboard = dashboard(STREAMING);
		for (String[] pair : new String[][] {
				{ "tokengap_time_to_first_token_seconds", "vllm:time_to_first_token_seconds" },
				{ "tokengap_inter_token_latency_seconds", "vllm:inter_token_latency_seconds" },
				{ "tokengap_time_per_output_token_seconds", "vllm:request_time_per_output_token_seconds" },
				{ "tokengap_e2e_request_latency_seconds", "vllm:e2e_request_latency_seconds" } }) {
			JsonNode panel = panelWith(dashboard, pair[0] + "_bucket");
			String exprs = exprs(panel);
			assertThat(exprs).as("%s overlays %s on the same panel", pair[0], pair[1]).contains(pair[1] + "_bucket");
			for (String q : List.of("0.5", "0.95", "0.99")) {
				assertThat(exprs).contains("histogram_quantile(" + q + ", sum by (le) (rate(" + pair[0] + "_bucket")
					.contains("histogram_quantile(" + q + ", sum by (le) (rate(" + pair[1] + "_bucket");
			}
		}
		assertThat(panelWith(dashboard, "increase(tokengap_inter_token_latency_seconds_bucket").path("type").asString())
			.isEqualTo("heatmap");
		panelWith(dashboard, "rate(tokengap_stalls_total");
		panelWith(dashboard, "tokengap_stalled_streams{");
		assertThat(exprs(panelWith(dashboard, "rate(tokengap_smooth_streams_total"))).contains(GOODPUT_STREAMS)
			.doesNotContain("outcome=\"completed\"");
		assertThat(exprs(panelWith(dashboard, "increase(tokengap_smooth_streams_total")))
			.contains("increase(tokengap_streams_total{" + CLIENT_FILTER + ", outcome!~\"client_cancelled|invalid\"}[")
			.doesNotContain("outcome=\"completed\"");
		assertThat(exprs(panelWith(dashboard, ENGINE_FAILURES + "}[$__rate_interval])) / "))).contains(GOODPUT_STREAMS);
		panelWith(dashboard, "increase(tokengap_recording_errors_total{");
		panelWith(dashboard, "sum by (pod) (increase(tokengap_recording_errors_total{");
		for (String q : List.of("0.5", "0.99")) {
			panelWith(dashboard,
					"histogram_quantile(" + q + ", sum by (le) (rate(tokengap_stream_p99_gap_seconds_bucket{" + CLIENT_FILTER);
		}
		assertThat(panelWith(dashboard, "tokengap_stream_max_gap_seconds_bucket").path("type").asString())
			.isEqualTo("heatmap");
		assertThat(panelWith(dashboard, "tokengap_stream_jitter_ratio_bucket").path("type").asString())
			.isEqualTo("heatmap");
		panelWith(dashboard, "tokengap_proxy_write_delay_seconds_bucket");
	}

	@Test
	void streamsByOutcomeAreStackedByKindAndCoverEveryContractOutcome() {
		JsonNode panel = panelWith(dashboard(STREAMING), "sum by (outcome) (rate(tokengap_streams_total{");
		assertThat(panel.path("fieldConfig").path("defaults").path("custom").path("stacking").path("mode").asString())
			.isEqualTo("normal");
		List<String> exprs = new java.util.ArrayList<>();
		panel.path("targets").forEach((target) -> exprs.add(target.path("expr").asString()));
		assertThat(exprs).as("one query per kind, in stacking order").hasSize(3);
		assertThat(exprs.get(0)).contains("outcome=\"completed\"");
		assertThat(exprs.get(1)).contains(ENGINE_FAILURES);
		assertThat(exprs.get(2)).contains("outcome=~\"client_cancelled|invalid\"");
		String contract = ProjectFiles.read("docs/metrics-contract.md");
		for (String outcome : List.of("completed", "engine_error", "rejected", "invalid", "upstream_error",
				"upstream_timeout", "client_cancelled")) {
			assertThat(contract).as("contract outcome").contains("| `" + outcome + "` |");
			assertThat(String.join("\n", exprs)).as("outcome %s is shown", outcome).contains(outcome);
		}
	}

	@Test
	void spikeAttributionPutsCausesAndEngineStateOnTheClientsTimeAxis() {
		Dashboard dashboard = dashboard(ATTRIBUTION);
		assertThat(exprs(panelWith(dashboard, "rate(tokengap_gap_spike_seconds_count"))).contains("sum by (cause)");
		assertThat(exprs(panelWith(dashboard, "rate(tokengap_gap_spike_seconds_sum"))).contains("sum by (cause)");
		String itlP99 = "histogram_quantile(0.99, sum by (le) (rate(tokengap_inter_token_latency_seconds_bucket";
		for (String engine : List.of("tokengap_backend_requests_running", "tokengap_backend_requests_waiting",
				"tokengap_backend_kv_cache_usage_ratio", "tokengap_backend_preemptions_total")) {
			assertThat(exprs(panelWith(dashboard, engine + "{"))).as("%s beside the client's ITL p99", engine)
				.contains(itlP99);
		}
		panelWith(dashboard, "tokengap_backend_up{");
		panelWith(dashboard, "tokengap_backend_scrape_errors_total{");
		panelWith(dashboard, "tokengap_backend_scrape_duration_seconds_bucket{");
	}

	private static Dashboard dashboard(String name) {
		return Dashboards.load().stream().filter((d) -> d.name().equals(name)).findFirst().orElseThrow();
	}

	private static JsonNode panelWith(Dashboard dashboard, String fragment) {
		return dashboard.panels()
			.stream()
			.filter((panel) -> exprs(panel).contains(fragment))
			.findFirst()
			.orElseThrow(() -> new AssertionError(dashboard.name() + " has no panel querying " + fragment));
	}

	private static String exprs(JsonNode panel) {
		StringBuilder all = new StringBuilder();
		panel.path("targets").forEach((target) -> all.append(target.path("expr").asString("")).append('\n'));
		return all.toString();
	}

}
