package dev.tokengap.deploy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

import dev.tokengap.testsupport.ProjectFiles;
import dev.tokengap.testsupport.Promtool;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The laptop demo, {@code docker/compose.yaml}: its Prometheus loads the one rules file
 * and its Grafana the one copy of the dashboards, and every file it mounts exists.
 * (PrometheusContainerTests runs this Prometheus configuration for real.)
 */
class DemoComposeTests {

	@Test
	@SuppressWarnings("unchecked")
	void composeMountsTheOneRulesFileAndTheOneDashboardsDirectory() {
		Map<String, Object> compose = new Yaml().load(ProjectFiles.read("docker/compose.yaml"));
		Map<String, Map<String, Object>> services = (Map<String, Map<String, Object>>) compose.get("services");
		assertThat(services.keySet()).contains("simulator", "tokengap", "prometheus", "grafana");
		assertThat((List<String>) services.get("simulator").get("command")).contains("--tokengap.mode=simulator");
		assertThat((List<String>) services.get("tokengap").get("command"))
			.contains("--tokengap.upstream.url=http://simulator:8000");
		assertThat(services.get("tokengap")).containsEntry("read_only", true);
		assertThat((List<String>) services.get("prometheus").get("volumes"))
			.contains("../helm/tokengap/files/tokengap-rules.yaml:/etc/prometheus/rules/tokengap-rules.yaml:ro");
		assertThat((List<String>) services.get("grafana").get("volumes"))
			.contains("../grafana:/var/lib/grafana/dashboards/tokengap:ro");
		for (Map<String, Object> service : services.values()) {
			for (String volume : (List<String>) service.getOrDefault("volumes", List.of())) {
				Path host = ProjectFiles.path("docker").resolve(volume.substring(0, volume.indexOf(':'))).normalize();
				assertThat(host).as(volume).exists();
			}
		}
	}

	@Test
	void prometheusConfigurationIsValidAndLoadsTheRulesFromWhereComposeMountsThem() throws IOException {
		Promtool.Result syntax = Promtool.run("check", "config", "--syntax-only", "docker/prometheus.yml");
		assertThat(syntax.exit()).as("promtool check config said:%n%s", syntax.output()).isZero();
		String config = ProjectFiles.read("docker/prometheus.yml");
		assertThat(config).contains("- /etc/prometheus/rules/tokengap-rules.yaml")
			.contains("job_name: tokengap")
			.contains("metrics_path: /actuator/prometheus");
		// With the rules file where compose mounts it,
		// the whole configuration checks out.
		Path dir = Files.createTempDirectory("tokengap-prometheus");
		try {
			Files.copy(ProjectFiles.path(AlertRules.FILE), dir.resolve("tokengap-rules.yaml"));
			Path local = dir.resolve("prometheus.yml");
			Files.writeString(local,
					config.replace("/etc/prometheus/rules/tokengap-rules.yaml", "tokengap-rules.yaml"));
			Promtool.Result full = Promtool.run("check", "config", local.toString());
			assertThat(full.exit()).as("promtool check config said:%n%s", full.output()).isZero();
			assertThat(full.output()).contains(
					"SUCCESS: " + (AlertRulesTests.ALERTS.size() + AlertRules.recordings().size()) + " rules found");
		}
		finally {
			try (var files = Files.list(dir)) {
				for (Path file : files.toList()) {
					Files.delete(file);
				}
			}
			Files.delete(dir);
		}
	}

}
