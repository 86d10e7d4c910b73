package dev.tokengap.deploy;

import java.util.List;
import java.util.Map;

import dev.tokengap.deploy.ChartTests.Manifests;
import dev.tokengap.testsupport.ProjectFiles;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

import static dev.tokengap.deploy.ChartTests.list;
import static dev.tokengap.deploy.ChartTests.map;
import static dev.tokengap.deploy.ChartTests.render;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code mode=monitoring}: for pods the chart does not own (tokengap injected beside an
 * engine), a PodMonitor and, when enabled, the alert rules and dashboards, and nothing
 * that runs. Also the scrape settings the ServiceMonitor and the PodMonitor both pass
 * through.
 */
class ChartMonitoringModeTests {

	@Test
	void monitoringModeRendersAPodMonitorAndNothingThatRuns() {
		Manifests manifests = render("mode=monitoring");
		assertThat(manifests.kinds()).containsExactly("PodMonitor");

		Map<String, Object> spec = map(manifests.one("PodMonitor"), "spec");
		assertThat(map(spec, "selector")).isEqualTo(Map.of("matchLabels", Map.of("tokengap.dev/inject", "true")));
		assertThat(map(spec, "namespaceSelector")).as("the release namespace by default")
			.isEqualTo(Map.of("matchNames", List.of("ml")));
		List<Map<String, Object>> endpoints = list(spec, "podMetricsEndpoints");
		assertThat(endpoints).hasSize(2);
		assertThat(endpoints.get(0)).containsEntry("targetPort", 8081)
			.containsEntry("path", "/actuator/prometheus")
			.containsEntry("interval", "15s")
			.containsEntry("scrapeTimeout", "10s")
			.doesNotContainKeys("honorLabels", "metricRelabelings");
		assertThat(list(endpoints.get(0), "relabelings")).as("job=\"tokengap\", as the alert rules expect")
			.containsExactly(Map.of("action", "replace", "targetLabel", "job", "replacement", "tokengap"));
		assertThat(endpoints.get(1)).containsEntry("targetPort", 8000).containsEntry("path", "/metrics");
		assertThat(list(endpoints.get(1), "relabelings").get(0)).containsEntry("replacement", "vllm");
	}

	@Test
	void monitoringModeCarriesTheRulesAndDashboardsWithoutADeployment() {
		Manifests manifests = render("mode=monitoring", "prometheusRule.enabled=true", "grafanaDashboards.enabled=true",
				"networkPolicy.enabled=true", "podDisruptionBudget.enabled=true", "serviceAccount.create=true");
		List<String> expected = new java.util.ArrayList<>(List.of("PodMonitor", "PrometheusRule"));
		for (int i = 0; i < Dashboards.load().size(); i++) {
			expected.add("ConfigMap");
		}
		assertThat(manifests.kinds()).as("one ConfigMap per dashboard").containsExactlyInAnyOrderElementsOf(expected);
		assertThat(manifests.one("PrometheusRule").get("spec")).as("the rules file, embedded unchanged")
			.isEqualTo(new Yaml().load(ProjectFiles.read(AlertRules.FILE)));
		for (Map<String, Object> configMap : manifests.all("ConfigMap")) {
			String file = map(configMap, "data").keySet().iterator().next();
			assertThat(map(configMap, "data").get(file)).isEqualTo(ProjectFiles.read("grafana/" + file));
		}
	}

	@Test
	void theSelectorTheNamespacesAndThePortsAreConfigurable() {
		Manifests manifests = render("mode=monitoring", "podMonitor.selector.matchLabels.app=vllm-decode",
				"podMonitor.selector.matchLabels.tokengap\\.dev/inject=null", "podMonitor.namespaceSelector.any=true",
				"podMonitor.tokengapPort=tg-management", "podMonitor.engine.port=8200",
				"podMonitor.labels.release=kps");
		Map<String, Object> podMonitor = manifests.one("PodMonitor");
		assertThat(map(map(podMonitor, "metadata"), "labels")).containsEntry("release", "kps");
		Map<String, Object> spec = map(podMonitor, "spec");
		assertThat(map(spec, "selector")).isEqualTo(Map.of("matchLabels", Map.of("app", "vllm-decode")));
		assertThat(map(spec, "namespaceSelector")).isEqualTo(Map.of("any", true));
		List<Map<String, Object>> endpoints = list(spec, "podMetricsEndpoints");
		assertThat(endpoints.get(0)).containsEntry("port", "tg-management").doesNotContainKey("targetPort");
		assertThat(endpoints.get(1)).containsEntry("targetPort", 8200);

		List<Map<String, Object>> tokengapOnly = list(
				map(render("mode=monitoring", "podMonitor.engine.enabled=false").one("PodMonitor"), "spec"),
				"podMetricsEndpoints");
		assertThat(tokengapOnly).hasSize(1);
		assertThat(tokengapOnly.get(0)).containsEntry("path", "/actuator/prometheus");
	}

	@Test
	void podMonitorPassesScrapeSettingsAndRelabelingsThroughToEveryEndpoint() {
		Manifests manifests = render(concat("mode=monitoring", "podMonitor"));
		for (Map<String, Object> endpoint : list(map(manifests.one("PodMonitor"), "spec"), "podMetricsEndpoints")) {
			assertPassedThrough(endpoint);
		}
	}

	@Test
	void serviceMonitorPassesScrapeSettingsAndRelabelingsThroughToEveryEndpoint() {
		Manifests manifests = render(concat("serviceMonitor.enabled=true", "serviceMonitor"));
		List<Map<String, Object>> endpoints = list(map(manifests.one("ServiceMonitor"), "spec"), "endpoints");
		assertThat(endpoints).hasSize(2);
		for (Map<String, Object> endpoint : endpoints) {
			assertPassedThrough(endpoint);
		}
	}

	@Test
	void aServiceMonitorInMonitoringModeIsRefused() {
		assertThatThrownBy(() -> render("mode=monitoring", "serviceMonitor.enabled=true"))
			.hasMessageContaining("monitoring mode has no Service of its own to monitor");
	}

	private static String[] concat(String first, String monitor) {
		return new String[] { first, monitor + ".interval=30s", monitor + ".scrapeTimeout=20s",
				monitor + ".honorLabels=true", monitor + ".relabelings[0].action=replace",
				monitor + ".relabelings[0].sourceLabels[0]=__meta_kubernetes_pod_node_name",
				monitor + ".relabelings[0].targetLabel=node", monitor + ".metricRelabelings[0].action=drop",
				monitor + ".metricRelabelings[0].sourceLabels[0]=__name__",
				monitor + ".metricRelabelings[0].regex=jvm_.*" };
	}

	private static void assertPassedThrough(Map<String, Object> endpoint) {
		assertThat(endpoint).containsEntry("interval", "30s")
			.containsEntry("scrapeTimeout", "20s")
			.containsEntry("honorLabels", true);
		List<Map<String, Object>> relabelings = list(endpoint, "relabelings");
		assertThat(relabelings).as("the chart's job label first, then the values'").hasSize(2);
		assertThat(relabelings.get(0)).containsEntry("targetLabel", "job");
		assertThat(relabelings.get(1)).isEqualTo(Map.of("action", "replace", "sourceLabels",
				List.of("__meta_kubernetes_pod_node_name"), "targetLabel", "node"));
		assertThat(list(endpoint, "metricRelabelings"))
			.containsExactly(Map.of("action", "drop", "sourceLabels", List.of("__name__"), "regex", "jvm_.*"));
	}

}
