package dev.tokengap.deploy;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

import dev.tokengap.deploy.AlertRules.Alert;
import dev.tokengap.testsupport.EnginePoolSeries;
import dev.tokengap.testsupport.MetricsContract;
import dev.tokengap.testsupport.ProjectFiles;
import dev.tokengap.testsupport.Promtool;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The alert rules file: valid for Prometheus, every alert unit-tested by
 * {@code promtool test rules} to fire on series that should trigger it and to stay silent
 * otherwise, every series from the metrics contract or vLLM, and every runbook link
 * pointing at a README section that exists.
 */
class AlertRulesTests {

	static final String PROMTOOL_TESTS = "src/test/promtool/tokengap-rules-test.yaml";

	static final List<String> ALERTS = List.of("TokengapClientItlP99High", "TokengapStallRateHigh",
			"TokengapSmoothGoodputLow", "TokengapStreamFailuresHigh", "TokengapStreamP99GapHigh", "TokengapTtftP99High",
			"TokengapTtftAboveEngine", "TokengapEnginePreemptions", "TokengapEngineSuccessRateLow",
			"TokengapEngineStuck", "TokengapBackendScrapeDown", "TokengapBackendNotReady", "TokengapDown",
			"TokengapAllDown", "TokengapRecordingErrors", "TokengapEnginePoolSaturated");

	/** The streams goodput counts (contract v2): all but the client's own doing. */
	static final String GOODPUT_DENOMINATOR = "tokengap_streams_total{outcome!~\"client_cancelled|invalid\"}";

	/** Engine-side failures (contract v2 outcomes). */
	static final String ENGINE_FAILURES = "tokengap_streams_total{outcome=~\"engine_error|rejected|upstream_error|upstream_timeout\"}";

	@Test
	void rulesFileIsValidForPrometheus() {
		Promtool.Result result = Promtool.run("check", "rules", AlertRules.FILE);
		assertThat(result.exit()).as("promtool check rules said:%n%s", result.output()).isZero();
		assertThat(result.output())
			.contains("SUCCESS: " + (ALERTS.size() + AlertRules.recordings().size()) + " rules found");
	}

	@Test
	void everyAlertFiresAndStaysSilentAsThePromtoolTestsExpect() {
		Promtool.Result result = Promtool.run("test", "rules", PROMTOOL_TESTS);
		assertThat(result.exit()).as("promtool test rules said:%n%s", result.output()).isZero();
		assertThat(result.output()).contains("SUCCESS");
	}

	@Test
	@SuppressWarnings("unchecked")
	void promtoolTestsCoverEveryAlertFiringAndSilent() {
		Map<String, Object> tests = new Yaml().load(ProjectFiles.read(PROMTOOL_TESTS));
		Set<String> fires = new LinkedHashSet<>();
		Set<String> silent = new LinkedHashSet<>();
		for (Map<String, Object> test : (List<Map<String, Object>>) tests.get("tests")) {
			for (Map<String, Object> check : (List<Map<String, Object>>) test.get("alert_rule_test")) {
				List<?> expected = (List<?>) check.get("exp_alerts");
				String alert = (String) check.get("alertname");
				if (expected == null || expected.isEmpty()) {
					silent.add(alert);
				}
				else {
					fires.add(alert);
				}
			}
		}
		assertThat(fires).as("alerts with a firing case").containsExactlyInAnyOrderElementsOf(ALERTS);
		assertThat(silent).as("alerts with a silent case").containsExactlyInAnyOrderElementsOf(ALERTS);
	}

	@Test
	void alertsAreTheOnesIssue4AndContractVersion2AskForOnTheRightSeries() {
		Map<String, Alert> alerts = byName();
		assertThat(alerts.keySet()).containsExactlyElementsOf(ALERTS);
		assertThat(series("TokengapClientItlP99High")).contains("tokengap_inter_token_latency_seconds_bucket");
		assertThat(series("TokengapStallRateHigh")).contains("tokengap_stalls_total");
		assertThat(expanded("TokengapSmoothGoodputLow")).contains("rate(tokengap_smooth_streams_total[")
			.contains("rate(tokengap_streams_total[")
			.contains("{outcome!~\"client_cancelled|invalid\"}")
			.doesNotContain("outcome=\"completed\"");
		assertThat(expanded("TokengapStreamFailuresHigh"))
			.contains("{outcome=~\"engine_error|rejected|upstream_error|upstream_timeout\"}")
			.contains("{outcome!~\"client_cancelled|invalid\"}");
		assertThat(alerts.get("TokengapRecordingErrors").expr()).contains("increase(tokengap_recording_errors_total[")
			.endsWith("> 0");
		assertThat(series("TokengapTtftAboveEngine")).contains("tokengap_time_to_first_token_seconds_bucket",
				"vllm:time_to_first_token_seconds_bucket", "tokengap_model_info");
		assertThat(series("TokengapStreamP99GapHigh")).contains("tokengap_stream_p99_gap_seconds_bucket",
				"tokengap_stream_p99_gap_seconds_count");
		assertThat(series("TokengapTtftP99High")).contains("tokengap_time_to_first_token_seconds_bucket");
		assertThat(series("TokengapEnginePreemptions")).contains("tokengap_backend_preemptions_total");
		assertThat(expanded("TokengapEngineSuccessRateLow")).contains("rate(vllm:request_success_total[")
			.contains("{finished_reason=~\"length|abort\"}");
		assertThat(alerts.get("TokengapEngineSuccessRateLow").labels()).containsEntry("severity", "critical");
		assertThat(alerts.get("TokengapEngineStuck").expr())
			.isEqualTo("max by (cluster, namespace, pod) (tokengap_engine_stuck) == 1");
		assertThat(alerts.get("TokengapBackendScrapeDown").expr()).contains("tokengap_backend_up == 0")
			.contains("max_over_time(tokengap_backend_up[1h]) == 1");
		assertThat(alerts.get("TokengapBackendNotReady").expr()).isEqualTo("tokengap_backend_up == 0");
		assertThat(alerts.get("TokengapBackendNotReady").forDuration()).as("longer than a model load").isEqualTo("45m");
		assertThat(alerts.get("TokengapDown").expr()).isEqualTo("up{job=\"tokengap\"} == 0");
		assertThat(alerts.get("TokengapDown").labels()).containsEntry("severity", "warning");
		assertThat(alerts.get("TokengapAllDown").expr()).contains("sum by (cluster, namespace) (up{job=\"tokengap\"})");
		assertThat(alerts.get("TokengapAllDown").labels()).containsEntry("severity", "critical");
		assertThat(ProjectFiles.read(AlertRules.FILE)).as("no alert that fires forever without a namespace")
			.doesNotContain("absent(");
	}

	/**
	 * Fleet scale: every aggregation, in alerts and recording rules, keeps
	 * {@code cluster} (absent on a single Prometheus, an external label behind Thanos or
	 * Mimir) and {@code namespace} where it keeps any label, but TTFT, which is compared
	 * per model across namespaces.
	 */
	@Test
	void everyAggregationKeepsTheClusterLabel() {
		List<String> exprs = new java.util.ArrayList<>(AlertRules.recordings().values());
		AlertRules.load().forEach((alert) -> exprs.add(alert.expr()));
		Pattern by = Pattern.compile("\\b(sum|max|min|avg|count) by \\(([^)]*)\\)");
		for (String expr : exprs) {
			Matcher matcher = by.matcher(expr);
			while (matcher.find()) {
				assertThat(matcher.group(2)).as("%s in %s", matcher.group(), expr).startsWith("cluster, ");
			}
		}
	}

	/**
	 * The threshold the chart's values can change is the number before
	 * {@code # threshold}: one per alert.
	 */
	@Test
	void everyThresholdIsMarkedOnceForTheChart() {
		String file = ProjectFiles.read(AlertRules.FILE);
		Matcher marked = Pattern.compile("[<>] ([0-9.]+) # threshold\\n").matcher(file);
		int count = 0;
		while (marked.find()) {
			count++;
		}
		assertThat(count)
			.as("alerts with a threshold: all but the five on tokengap's and the engine's health, the stuck "
					+ "engine's and the engine pool's")
			.isEqualTo(ALERTS.size() - 7);
		assertThat(AlertRules.load().stream().filter((alert) -> alert.expr().contains("up{job=\"tokengap\"}")))
			.as("tokengap's own job, written as the chart's tokengapSelector rewrites it")
			.extracting(Alert::name)
			.containsExactly("TokengapDown", "TokengapAllDown");
	}

	@Test
	void everyRecordedSeriesIsRecordedAndUsed() {
		Map<String, String> recordings = AlertRules.recordings();
		StringBuilder users = new StringBuilder();
		AlertRules.load().forEach((alert) -> users.append(AlertRules.expanded(alert.expr())).append('\n'));
		for (Dashboards.Dashboard dashboard : Dashboards.load()) {
			for (Dashboards.Query query : dashboard.queries()) {
				users.append(AlertRules.expanded(query.expr())).append('\n');
			}
		}
		for (String name : recordings.keySet()) {
			assertThat(PromQl.recorded(users.toString())).as("%s is read by an alert or a dashboard", name)
				.contains(name);
		}
	}

	@Test
	void everySeriesIsInTheMetricsContractOrVllms() {
		MetricsContract contract = MetricsContract.load();
		for (Alert alert : AlertRules.load()) {
			for (String series : PromQl.series(AlertRules.expanded(alert.expr()))) {
				if (series.startsWith("tokengap_")) {
					assertThat(contract.familyOf(series))
						.as("%s: %s is in docs/metrics-contract.md", alert.name(), series)
						.isNotNull();
				}
				else if (series.startsWith("vllm:")) {
					assertThat(SimulatorSeries.names()).as("%s: %s is a vLLM series", alert.name(), series)
						.contains(series);
				}
				else if (!series.equals("up")) {
					assertThat(EnginePoolSeries.NAMES)
						.as("%s: %s is the engine pool's (Reactor Netty's)", alert.name(), series)
						.contains(series);
				}
			}
		}
	}

	@Test
	void everyAlertHasSeverityASummaryAndARunbookSectionInTheReadme() {
		Set<String> anchors = readmeAnchors();
		for (Alert alert : AlertRules.load()) {
			assertThat(alert.labels()).as(alert.name()).containsKey("severity");
			assertThat(alert.annotations()).as(alert.name()).containsKeys("summary", "description");
			String runbook = alert.annotations().get("runbook_url");
			assertThat(runbook).as("%s: the README's section, which the chart's runbookUrl completes", alert.name())
				.startsWith("README.md#");
			String anchor = runbook.substring(runbook.indexOf('#') + 1);
			assertThat(anchor).as("%s links to its own section", alert.name())
				.isEqualTo(alert.name().toLowerCase(Locale.ROOT));
			assertThat(anchors).as("README.md has a section for %s", alert.name()).contains(anchor);
		}
	}

	private static Map<String, Alert> byName() {
		Map<String, Alert> alerts = new java.util.LinkedHashMap<>();
		AlertRules.load().forEach((alert) -> alerts.put(alert.name(), alert));
		return alerts;
	}

	private static Set<String> series(String alert) {
		return PromQl.series(expanded(alert));
	}

	private static String expanded(String alert) {
		return AlertRules.expanded(byName().get(alert).expr());
	}

	/** GitHub's anchors of the README's headings. */
	static Set<String> readmeAnchors() {
		Set<String> anchors = new LinkedHashSet<>();
		Matcher heading = Pattern.compile("^#{1,6}\\s+(.+)$", Pattern.MULTILINE)
			.matcher(ProjectFiles.read("README.md"));
		while (heading.find()) {
			anchors.add(
					heading.group(1).strip().toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9 _-]", "").replace(' ', '-'));
		}
		return anchors;
	}

}
