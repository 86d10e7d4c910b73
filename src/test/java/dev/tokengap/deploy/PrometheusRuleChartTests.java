package dev.tokengap.deploy;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

import dev.tokengap.deploy.ChartTests.Manifests;
import dev.tokengap.testsupport.ProjectFiles;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The chart's PrometheusRule, rendered by the real Helm (helm-java): the rules file
 * unchanged with the default values, and every prometheusRule.* value (per-alert
 * switches, for, severity, threshold, labels, annotations, runbook URL, tokengap's job
 * selector) applied the way the values say.
 */
class PrometheusRuleChartTests {

	@Test
	void defaultValuesEmbedTheRulesFileUnchanged() {
		Map<String, Object> spec = spec("prometheusRule.enabled=true");
		assertThat(spec).isEqualTo(new Yaml().load(ProjectFiles.read(AlertRules.FILE)));
		assertThat(alerts(spec).keySet()).containsExactlyElementsOf(AlertRulesTests.ALERTS);
		assertThat(alert(spec, "TokengapDown").get("annotations").toString())
			.contains("runbook_url=README.md#tokengapdown");
	}

	@Test
	void anAlertCanBeSwitchedOffAndGetAnotherForSeverityAndThreshold() {
		Map<String, Object> spec = spec("prometheusRule.enabled=true",
				"prometheusRule.rules.TokengapRecordingErrors.enabled=false",
				"prometheusRule.rules.TokengapClientItlP99High.for=20m",
				"prometheusRule.rules.TokengapClientItlP99High.severity=critical",
				"prometheusRule.rules.TokengapClientItlP99High.threshold=0.4",
				"prometheusRule.rules.TokengapBackendNotReady.for=90m");
		assertThat(alerts(spec)).doesNotContainKey("TokengapRecordingErrors")
			.hasSize(AlertRulesTests.ALERTS.size() - 1);
		Map<String, Object> itl = alert(spec, "TokengapClientItlP99High");
		assertThat(itl).containsEntry("for", "20m");
		assertThat(ChartTests.map(itl, "labels")).containsEntry("severity", "critical");
		assertThat((String) itl.get("expr")).contains("p99_rate5m > 0.4 # threshold\n")
			.doesNotContain("0.25")
			.as("the traffic floor is not the threshold")
			.contains("count:rate5m > 1");
		assertThat(alert(spec, "TokengapBackendNotReady")).containsEntry("for", "90m");
		assertThat(alert(spec, "TokengapStallRateHigh")).as("other alerts unchanged")
			.isEqualTo(alert(spec("prometheusRule.enabled=true"), "TokengapStallRateHigh"));
		assertThat(recordings(spec)).as("recording rules always kept")
			.isEqualTo(recordings(spec("prometheusRule.enabled=true")));
	}

	@Test
	void labelsAnnotationsAndRunbookLinksComeFromTheValues() {
		String base = "https://git.example.com/ml/tokengap/-/blob/v0.1.0/README.md";
		Map<String, Object> spec = spec("prometheusRule.enabled=true", "prometheusRule.runbookUrl=" + base,
				"prometheusRule.additionalLabels.team=ml-platform",
				"prometheusRule.additionalAnnotations.dashboard=https://grafana.example.com/d/tokengap",
				"prometheusRule.rules.TokengapDown.additionalLabels.pager=ml-oncall",
				"prometheusRule.rules.TokengapDown.additionalAnnotations.dashboard=https://grafana.example.com/d/pods",
				"prometheusRule.rules.TokengapAllDown.runbookUrl=https://wiki.example.com/tokengap-all-down");
		for (Map<String, Object> alert : alerts(spec).values()) {
			assertThat(ChartTests.map(alert, "labels")).containsEntry("team", "ml-platform").containsKey("severity");
			String anchor = ((String) alert.get("alert")).toLowerCase(java.util.Locale.ROOT);
			if (!"tokengapalldown".equals(anchor)) {
				assertThat(ChartTests.map(alert, "annotations")).containsEntry("runbook_url", base + "#" + anchor);
			}
		}
		assertThat(ChartTests.map(alert(spec, "TokengapDown"), "labels")).containsEntry("pager", "ml-oncall")
			.containsEntry("severity", "warning");
		assertThat(ChartTests.map(alert(spec, "TokengapDown"), "annotations"))
			.containsEntry("dashboard", "https://grafana.example.com/d/pods")
			.containsKeys("summary", "description");
		assertThat(ChartTests.map(alert(spec, "TokengapStallRateHigh"), "annotations")).containsEntry("dashboard",
				"https://grafana.example.com/d/tokengap");
		assertThat(ChartTests.map(alert(spec, "TokengapAllDown"), "annotations")).containsEntry("runbook_url",
				"https://wiki.example.com/tokengap-all-down");
	}

	@Test
	void tokengapsJobSelectorComesFromTheValues() {
		Map<String, Object> spec = spec("prometheusRule.enabled=true",
				"prometheusRule.tokengapSelector=job=~\"inference/tokengap|tokengap-proxy\"");
		assertThat((String) alert(spec, "TokengapDown").get("expr"))
			.isEqualTo("up{job=~\"inference/tokengap|tokengap-proxy\"} == 0\n");
		assertThat((String) alert(spec, "TokengapAllDown").get("expr"))
			.contains("(up{job=~\"inference/tokengap|tokengap-proxy\"})");
	}

	@Test
	void aMistypedAlertOrAThresholdOnAnAlertWithoutOneIsRefused() {
		assertThatThrownBy(
				() -> spec("prometheusRule.enabled=true", "prometheusRule.rules.TokengapIsDown.enabled=false"))
			.hasMessageContaining("prometheusRule.rules.TokengapIsDown: there is no such alert");
		assertThatThrownBy(() -> spec("prometheusRule.enabled=true", "prometheusRule.rules.TokengapDown.threshold=1"))
			.hasMessageContaining("prometheusRule.rules.TokengapDown.threshold: this alert has no threshold");
	}

	@SuppressWarnings("unchecked")
	private static Map<String, Object> spec(String... values) {
		Manifests manifests = ChartTests.render(values);
		return (Map<String, Object>) manifests.one("PrometheusRule").get("spec");
	}

	@SuppressWarnings("unchecked")
	private static List<Map<String, Object>> rules(Map<String, Object> spec) {
		List<Map<String, Object>> rules = new java.util.ArrayList<>();
		for (Map<String, Object> group : (List<Map<String, Object>>) spec.get("groups")) {
			rules.addAll((List<Map<String, Object>>) group.get("rules"));
		}
		return rules;
	}

	private static Map<String, Map<String, Object>> alerts(Map<String, Object> spec) {
		Map<String, Map<String, Object>> alerts = new LinkedHashMap<>();
		rules(spec).stream()
			.filter((r) -> r.get("alert") != null)
			.forEach((r) -> alerts.put((String) r.get("alert"), r));
		return alerts;
	}

	private static List<Map<String, Object>> recordings(Map<String, Object> spec) {
		return rules(spec).stream().filter((r) -> r.get("record") != null).toList();
	}

	private static Map<String, Object> alert(Map<String, Object> spec, String name) {
		Map<String, Object> alert = alerts(spec).get(name);
		assertThat(alert).as(name).isNotNull();
		return alert;
	}

}
