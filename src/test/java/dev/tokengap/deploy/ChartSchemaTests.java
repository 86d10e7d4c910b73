package dev.tokengap.deploy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.tokengap.deploy.ChartTests.Manifests;
import dev.tokengap.testsupport.ProjectFiles;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

import static dev.tokengap.deploy.ChartTests.CHART;
import static dev.tokengap.deploy.ChartTests.render;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code values.schema.json}, which Helm checks before rendering: a mistyped key or a
 * value of the wrong type fails with the key's path, every documented value passes, and
 * the schema and values.yaml declare the same keys. The prometheusRule and
 * grafanaDashboards sections stay open.
 */
class ChartSchemaTests {

	static final String SCHEMA = "helm/tokengap/values.schema.json";

	/**
	 * Sections whose keys other parts of the project own: open, and not checked against
	 * values.yaml.
	 */
	static final Set<String> OPEN = Set.of("prometheusRule", "grafanaDashboards", "dashboards", "global");

	@Test
	void aMistypedKeyFailsTheRenderNamingItAndWhereItIs() {
		Map<String, String> typos = Map.of("tokengap.javaToolOption=-Xmx1g",
				"at '/tokengap': additional properties 'javaToolOption' not allowed", "replicas=2",
				"at '': additional properties 'replicas' not allowed", "serviceMonitor.intervall=30s",
				"at '/serviceMonitor': additional properties 'intervall' not allowed", "podMonitor.engine.prot=8200",
				"at '/podMonitor/engine': additional properties 'prot' not allowed", "vllm.resources.request.cpu=8",
				"at '/vllm/resources': additional properties 'request' not allowed", "tokengap.jvm.processors=4",
				"at '/tokengap/jvm': additional properties 'processors' not allowed");
		typos.forEach((value, message) -> assertThatThrownBy(() -> render(value)).as(value)
			.hasMessageContaining("values don't meet the specifications of the schema")
			.hasMessageContaining(message));
	}

	@Test
	void aValueOfTheWrongShapeFailsTheRender() {
		Map<String, String> wrong = Map.of("replicaCount=two", "at '/replicaCount': got string, want integer",
				"mode=daemonset", "at '/mode': value must be one of", "service.type=Ingress", "at '/service/type'",
				"serviceMonitor.interval=15", "at '/serviceMonitor/interval'", "tokengap.port=80800",
				"at '/tokengap/port'", "tokengap.resources.limits.memory=true",
				"at '/tokengap/resources/limits/memory'");
		wrong.forEach(
				(value, message) -> assertThatThrownBy(() -> render(value)).as(value).hasMessageContaining(message));
	}

	@Test
	void everyDocumentedValuePassesInEveryMode() {
		for (String mode : List.of("sidecar", "standalone", "monitoring")) {
			Manifests manifests = render(ProjectFiles.path("src/test/resources/chart/every-documented-value.yaml"),
					"mode=" + mode);
			assertThat(manifests.kinds()).as(mode).contains("PrometheusRule", "ConfigMap");
		}
	}

	@Test
	void theRuleAndDashboardSectionsStayOpenForTheirOwners() {
		assertThat(render("prometheusRule.additionalGroups[0].name=extra", "grafanaDashboards.extraLabels.team=ml")
			.kinds()).contains("Deployment");
	}

	@Test
	void theSchemaAndValuesYamlDeclareTheSameKeys() {
		// JSON is YAML: one parser for both.
		Map<String, Object> schema = new Yaml().load(ProjectFiles.read(SCHEMA));
		Map<String, Object> values = new Yaml().load(ProjectFiles.read(CHART.resolve("values.yaml")));
		List<String> problems = new ArrayList<>();
		compare("", schema, values, problems);
		assertThat(problems).isEmpty();
	}

	@SuppressWarnings("unchecked")
	private static void compare(String path, Map<String, Object> schema, Map<String, Object> values,
			List<String> problems) {
		Map<String, Object> properties = (Map<String, Object>) schema.getOrDefault("properties", Map.of());
		if (Boolean.FALSE.equals(schema.get("additionalProperties"))) {
			values.keySet()
				.stream()
				.filter((key) -> !properties.containsKey(key))
				.forEach((key) -> problems.add(path + key + " is in values.yaml but not in the schema"));
		}
		properties.forEach((key, property) -> {
			if (path.isEmpty() && OPEN.contains(key)) {
				return;
			}
			if (!values.containsKey(key)) {
				problems.add(path + key + " is in the schema but not in values.yaml");
			}
			else if (values.get(key) instanceof Map<?, ?> nested
					&& ((Map<String, Object>) property).containsKey("properties")) {
				compare(path + key + ".", (Map<String, Object>) property, (Map<String, Object>) nested, problems);
			}
		});
	}

}
