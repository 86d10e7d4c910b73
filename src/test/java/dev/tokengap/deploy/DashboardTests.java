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
import dev.tokengap.testsupport.EnginePoolSeries;
import dev.tokengap.testsupport.MetricsContract;
import dev.tokengap.testsupport.ProjectFiles;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Grafana dashboards of {@code grafana/}: current schema, the datasource, namespace,
 * pod, model_name and endpoint variables used by every query whose series carry those
 * labels, only series of the metrics contract or vLLM's, and the panels the dashboards
 * promise (engine overlays, stalls, goodput, stream shape) and contract version 2 asks
 * for. (PrometheusContainerTests runs every query against real series.)
 */
class DashboardTests {

	static final String STREAMING = "streaming-latency.json";

	static final String ATTRIBUTION = "spike-attribution.json";

	static final String ENGINE = "engine-health.json";

	/**
	 * The engine's series of the selected tokengap pods (sidecar: the same pod label).
	 */
	static final String ENGINE_FILTER = "cluster=~\"$cluster\", namespace=~\"$namespace\", pod=~\"$pod\"";

	/**
	 * The served name -> engine name join (tokengap_model_info), filtered by the selected
	 * models.
	 */
	static final String MODEL_INFO_JOIN = " and on (cluster, model_name) label_replace(tokengap_model_info{"
			+ ENGINE_FILTER
			+ ", model_name=~\"$model_name\"}, \"model_name\", \"$1\", \"engine_model_name\", \"(.+)\")";

	/**
	 * The matchers of every client-side selector: the contract puts model_name and
	 * endpoint on them.
	 */
	static final String CLIENT_FILTER = "cluster=~\"$cluster\", namespace=~\"$namespace\", pod=~\"$pod\", model_name=~\"$model_name\", endpoint=~\"$endpoint\"";

	/** Engine-side failure outcomes (contract v2). */
	static final String ENGINE_FAILURES = "outcome=~\"engine_error|rejected|upstream_error|upstream_timeout\"";

	/**
	 * The goodput denominator (contract v2): every stream except the client's own doing.
	 */
	static final String GOODPUT_STREAMS = "rate(tokengap_streams_total{" + CLIENT_FILTER
			+ ", outcome!~\"client_cancelled|invalid\"}[";

	@Test
	void theDashboardsUseTheCurrentSchemaAndSharedCrosshair() {
		List<Dashboard> dashboards = Dashboards.load();
		assertThat(dashboards).extracting(Dashboard::name).containsExactly(ENGINE, ATTRIBUTION, STREAMING);
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
	void everyDashboardHasTheDatasourceClusterNamespacePodModelAndEndpointVariables() {
		for (Dashboard dashboard : Dashboards.load()) {
			Map<String, JsonNode> variables = dashboard.variables()
				.stream()
				.collect(Collectors.toMap((v) -> v.path("name").asString(), (v) -> v));
			// The trace data source an exemplar's trace id opens in, where a panel shows
			// exemplars.
			JsonNode trace = variables.remove("trace_datasource");
			if (trace != null) {
				assertThat(trace.path("type").asString()).isEqualTo("datasource");
				assertThat(trace.path("query").asString()).isEqualTo("tempo");
			}
			assertThat(variables.keySet()).as(dashboard.name())
				.containsExactlyInAnyOrder("datasource", "cluster", "namespace", "pod", "model_name", "endpoint");
			assertThat(variables.get("datasource").path("type").asString()).isEqualTo("datasource");
			assertThat(variables.get("datasource").path("query").asString()).isEqualTo("prometheus");
			for (String name : List.of("cluster", "namespace", "pod", "model_name", "endpoint")) {
				JsonNode variable = variables.get(name);
				assertThat(variable.path("type").asString()).as(name).isEqualTo("query");
				assertThat(variable.path("datasource").path("uid").asString()).isEqualTo("${datasource}");
				assertThat(variable.path("includeAll").asBoolean()).as(name).isTrue();
				assertThat(variable.path("allValue").asString()).as("All matches series without the label")
					.isEqualTo(".*");
				assertThat(Dashboards.variableQuery(variable)).startsWith("label_values(tokengap_requests_total")
					.endsWith(", " + name + ")");
				if (!"cluster".equals(name)) {
					assertThat(Dashboards.variableQuery(variable)).as("%s within the selected clusters", name)
						.contains("{cluster=~\"$cluster\"");
				}
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
	void everySeriesIsInTheMetricsContractOrVllmsOrRecordedByTheRules() {
		MetricsContract contract = MetricsContract.load();
		Set<String> recorded = AlertRules.recordings().keySet();
		for (Dashboard dashboard : Dashboards.load()) {
			for (Query query : dashboard.queries()) {
				Set<String> series = PromQl.series(query.expr());
				assertThat(PromQl.recorded(query.expr())).as("%s: recorded by tokengap-rules.yaml", query.origin())
					.isSubsetOf(recorded);
				assertThat(series.isEmpty() && PromQl.recorded(query.expr()).isEmpty()).as(query.origin()).isFalse();
				for (String name : series) {
					if (name.startsWith("tokengap_")) {
						assertThat(contract.familyOf(name))
							.as("%s: %s is in docs/metrics-contract.md", query.origin(), name)
							.isNotNull();
					}
					else if (name.startsWith("reactor_netty_")) {
						assertThat(EnginePoolSeries.NAMES).as("%s: %s is the engine pool's", query.origin(), name)
							.contains(name);
					}
					else if (SimulatorSeries.NOT_SIMULATED.contains(name)) {
						assertThat(query.panel().path("description").asString())
							.as("%s reads %s, which the simulator does not export: its description says so",
									query.origin(), name)
							.contains("simulator");
					}
					else {
						assertThat(SimulatorSeries.names()).as("%s: %s is a vLLM series", query.origin(), name)
							.contains(name);
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
				List<Map.Entry<String, String>> recorded = PromQl.recordedSelectors(query.expr());
				assertThat(selectors.size() + recorded.size()).as(query.origin()).isPositive();
				for (Map.Entry<String, String> selector : recorded) {
					String where = query.origin() + ": " + selector.getKey();
					assertThat(selector.getValue()).as(where)
						.contains("cluster=~\"$cluster\"", "model_name=~\"$model_name\"");
					if (selector.getKey().contains("namespace")) {
						assertThat(selector.getValue()).as(where).contains("namespace=~\"$namespace\"");
					}
				}
				for (Map.Entry<String, String> selector : selectors) {
					String series = selector.getKey();
					String matchers = selector.getValue();
					String where = query.origin() + ": " + series;
					assertThat(matchers).as(where).contains("cluster=~\"$cluster\", namespace=~\"$namespace\"");
					if (series.startsWith("vllm:")) {
						// The engine of the selected pods (vLLM has no endpoint label),
						// and the selected models through tokengap_model_info, or on
						// equal model_name where tokengap does not export it.
						assertThat(matchers).as(where).contains(ENGINE_FILTER).doesNotContain("endpoint=");
						if (!matchers.contains("model_name=~\"$model_name\"")) {
							assertThat(query.expr()).as("%s: filtered by model through tokengap_model_info", where)
								.contains(MODEL_INFO_JOIN);
						}
					}
					else if (series.equals("tokengap_model_info")) {
						assertThat(matchers).as(where).isEqualTo(ENGINE_FILTER + ", model_name=~\"$model_name\"");
					}
					else if (series.startsWith("tokengap_backend_")
							|| series.startsWith("tokengap_recording_errors_")) {
						// The engine mirror and tokengap's own health are per pod: no
						// model_name, no endpoint.
						assertThat(matchers).as(where)
							.contains("pod=~\"$pod\"")
							.doesNotContain("model_name", "endpoint");
					}
					else if (series.startsWith("reactor_netty_")) {
						// The engine pool is per pod, and only tokengap's own pool.
						assertThat(matchers).as(where)
							.contains("pod=~\"$pod\"", "name=\"engine\"")
							.doesNotContain("model_name", "endpoint");
					}
					else if (series.startsWith("tokengap_gap_spike_")) {
						// Spikes carry model_name and cause (contract v2), no endpoint.
						assertThat(matchers).as(where)
							.contains("pod=~\"$pod\"", "model_name=~\"$model_name\"")
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
	void theItlAndWorstGapPanelsShowExemplarsAndTheTraceDataSourceIsAVariable() {
		Dashboard dashboard = dashboard(STREAMING);
		for (String series : List.of("tokengap_inter_token_latency_seconds_bucket{",
				"tokengap_stream_max_gap_seconds_bucket{")) {
			JsonNode panel = panelWith(dashboard, series);
			List<JsonNode> targets = new java.util.ArrayList<>();
			panel.path("targets").forEach((t) -> {
				if (t.path("expr").asString("").contains(series)) {
					targets.add(t);
				}
			});
			assertThat(targets).as(series)
				.isNotEmpty()
				.allSatisfy((target) -> assertThat(target.path("exemplar").asBoolean()).as(series).isTrue());
			assertThat(panel.path("description").asString()).contains("$trace_datasource");
		}
		assertThat(dashboard.variables()).extracting((v) -> v.path("name").asString()).contains("trace_datasource");
	}

	@Test
	void outsideEngineTimeAndSpikePositionsHavePanels() {
		Dashboard streaming = dashboard(STREAMING);
		assertThat(exprs(panelWith(streaming, "tokengap_ttft_outside_engine_seconds_bucket{")))
			.contains("tokengap_engine_queue_time_seconds_bucket{");
		Dashboard attribution = dashboard(ATTRIBUTION);
		assertThat(exprs(
				panelWith(attribution, "sum by (model_name, cause, position) (rate(tokengap_gap_spike_seconds_count{")))
			.isNotEmpty();
	}

	/**
	 * Every vLLM query filtered by model goes through tokengap_model_info (aliases, LoRA
	 * adapters) and falls back, with {@code or}, to the plain model_name filter, so it
	 * works before tokengap exports it.
	 */
	@Test
	void vllmQueriesJoinThroughTokengapModelInfoWithAPlainModelNameFallback() {
		for (Dashboard dashboard : Dashboards.load()) {
			for (Query query : dashboard.queries()) {
				if (PromQl.series(query.expr()).stream().anyMatch((n) -> n.startsWith("vllm:"))) {
					assertThat(query.expr()).as(query.origin())
						.contains(MODEL_INFO_JOIN)
						.contains(") or (")
						.contains(ENGINE_FILTER + ", model_name=~\"$model_name\"}");
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
			JsonNode panel = panelWith(dashboard,
					"histogram_quantile(0.99, sum by (model_name, le) (rate(" + pair[0] + "_bucket");
			String exprs = exprs(panel);
			assertThat(exprs).as("%s overlays %s on the same panel", pair[0], pair[1]).contains(pair[1] + "_bucket{");
			for (String q : List.of("0.5", "0.95", "0.99")) {
				assertThat(exprs).as("per model, not all models blended into one line")
					.contains("histogram_quantile(" + q + ", sum by (model_name, le) (rate(" + pair[0] + "_bucket{"
							+ CLIENT_FILTER + ", endpoint!=\"other\"}")
					.contains("(histogram_quantile(" + q + ", sum by (model_name, le) (");
			}
			panel.path("targets")
				.forEach((target) -> assertThat(target.path("legendFormat").asString())
					.as("%s: one legend per model", panel.path("title").asString())
					.contains("{{model_name}}"));
		}
		assertThat(exprs(panelWith(dashboard, "rate(vllm:inter_token_latency_seconds_bucket{")))
			.as("vLLM <= 0.10 exports its per-token gap as time_per_output_token_seconds")
			.contains("or rate(vllm:time_per_output_token_seconds_bucket{" + ENGINE_FILTER);
		for (JsonNode panel : dashboard.panels()) {
			if (panel.path("title").asString().endsWith("p50 / p95 / p99")) {
				assertThat(PromQl.selectors(exprs(panel))).as(panel.path("title").asString())
					.filteredOn((selector) -> selector.getKey().startsWith("tokengap_")
							&& !selector.getKey().equals("tokengap_model_info"))
					.isNotEmpty()
					.allSatisfy((selector) -> assertThat(selector.getValue()).as("API endpoints only")
						.endsWith("endpoint!=\"other\""));
			}
		}
		JsonNode worst = panelWith(dashboard,
				"topk(10, histogram_quantile(0.99, sum by (cluster, namespace, pod, model_name, le)");
		assertThat(worst.path("type").asString()).isEqualTo("table");
		assertThat(exprs(worst)).contains("increase(tokengap_stalls_total{")
			.contains("increase(tokengap_smooth_streams_total{");
		panelWith(dashboard, "cluster_namespace_model:tokengap_inter_token_latency_seconds:p99_rate5m{");
		panelWith(dashboard, "cluster_namespace_model:tokengap_smooth_stream_goodput:ratio_rate10m{");
		panelWith(dashboard, "cluster_namespace_model_outcome:tokengap_streams_total:rate5m{");
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
			panelWith(dashboard, "histogram_quantile(" + q
					+ ", sum by (model_name, le) (rate(tokengap_stream_p99_gap_seconds_bucket{" + CLIENT_FILTER);
		}
		assertThat(panelWith(dashboard, "tokengap_stream_max_gap_seconds_bucket").path("type").asString())
			.isEqualTo("heatmap");
		assertThat(panelWith(dashboard, "tokengap_stream_jitter_ratio_bucket").path("type").asString())
			.isEqualTo("heatmap");
		panelWith(dashboard, "tokengap_proxy_write_delay_seconds_bucket");
	}

	@Test
	void streamsByOutcomeAreStackedByKindAndCoverEveryContractOutcome() {
		JsonNode panel = panelWith(dashboard(STREAMING), "sum by (model_name, outcome) (rate(tokengap_streams_total{");
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
		for (JsonNode panel : dashboard.panels()) {
			if (exprs(panel).contains("tokengap_gap_spike_seconds")) {
				// per model and cause, and for some panels per position too
				assertThat(exprs(panel)).as("spikes per model: %s", panel.path("title").asString())
					.containsPattern("sum by \\(model_name, cause[,)]")
					.contains("model_name=~\"$model_name\"");
			}
		}
		panelWith(dashboard, "rate(tokengap_gap_spike_seconds_count");
		panelWith(dashboard, "rate(tokengap_gap_spike_seconds_sum");
		assertThat(exprs(panelWith(dashboard, "vllm:inter_token_latency_seconds_bucket{" + ENGINE_FILTER)))
			.contains("or rate(vllm:time_per_output_token_seconds_bucket{");
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

	@Test
	void engineHealthShowsWhatOperatorsReadOffVllm() {
		Dashboard dashboard = dashboard(ENGINE);
		assertThat(exprs(panelWith(dashboard, "rate(vllm:request_success_total{")))
			.contains("sum by (model_name, finished_reason)");
		panelWith(dashboard, "rate(vllm:prompt_tokens_total{");
		panelWith(dashboard, "rate(vllm:generation_tokens_total{");
		JsonNode ratio = panelWith(dashboard, "/ ((sum by (model_name) (rate(vllm:generation_tokens_total{");
		assertThat(exprs(ratio)).contains("rate(vllm:prompt_tokens_total{");
		assertThat(panelWith(dashboard, "increase(vllm:request_prompt_tokens_bucket{").path("type").asString())
			.isEqualTo("heatmap");
		assertThat(exprs(panelWith(dashboard, "vllm:kv_cache_usage_perc{"))).contains("or vllm:gpu_cache_usage_perc{");
		assertThat(exprs(panelWith(dashboard, "rate(vllm:prefix_cache_hits_total{")))
			.contains("/ ((sum by (model_name) (rate(vllm:prefix_cache_queries_total{");
		assertThat(exprs(panelWith(dashboard, "rate(vllm:request_queue_time_seconds_bucket{")))
			.contains("histogram_quantile(0.99");
		panelWith(dashboard, "rate(vllm:num_preemptions_total{");
		JsonNode spec = panelWith(dashboard, "rate(vllm:spec_decode_num_accepted_tokens_total{");
		assertThat(exprs(spec)).contains("rate(vllm:spec_decode_num_draft_tokens_total{");
		assertThat(spec.path("description").asString()).as("says when the series exist")
			.contains("--speculative-config")
			.contains("tokengap.sim.num-speculative-tokens");
		assertThat(exprs(panelWith(dashboard, "cluster_model:tokengap_engine_time_to_first_token_seconds:p99_rate5m{")))
			.contains("cluster_model:tokengap_time_to_first_token_seconds:p99_rate5m{");
	}

	/**
	 * The chart ships every dashboard of grafana/, the engine-health one included, as a
	 * ConfigMap.
	 */
	@Test
	void theChartsDashboardConfigMapsIncludeEveryDashboard() {
		List<String> shipped = ChartTests.render("grafanaDashboards.enabled=true")
			.all("ConfigMap")
			.stream()
			.flatMap((configMap) -> ChartTests.map(configMap, "data").keySet().stream())
			.sorted()
			.toList();
		assertThat(shipped).containsExactly(ENGINE, ATTRIBUTION, STREAMING);
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
