package dev.tokengap.deploy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.networknt.schema.Error;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

import dev.tokengap.deploy.ChartTests.Manifests;
import dev.tokengap.testsupport.ProjectFiles;

import static dev.tokengap.deploy.ChartTests.list;
import static dev.tokengap.deploy.ChartTests.map;
import static dev.tokengap.deploy.ChartTests.render;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The chart's KEDA ScaledObject (autoscaling.*), rendered by the real Helm: off by
 * default; when on, minReplicaCount and maxReplicaCount required, a valid ScaledObject by
 * KEDA's published CRD schema (v2.20.2, unknown fields refused as kubectl's strict
 * validation refuses them), its metadata by Kubernetes' (fabric8's model), aimed at the
 * chart's Deployment, scaling down slower than up. PrometheusContainerTests runs its
 * queries in a real Prometheus.
 */
class ChartAutoscalingTests {

	static final String KEDA_CRD = "src/test/resources/deploy/keda/keda.sh_scaledobjects.yaml";

	static final String[] ENABLED = { "autoscaling.enabled=true", "autoscaling.minReplicaCount=1",
			"autoscaling.maxReplicaCount=4" };

	static final String[] EVERY_TRIGGER = { "autoscaling.ttftP99.enabled=true",
			"autoscaling.stalledShare.enabled=true" };

	private static final ObjectMapper JSON = new ObjectMapper();

	@Test
	void offByDefaultAndTheDeploymentKeepsItsReplicas() {
		Manifests manifests = render();
		assertThat(manifests.kinds()).doesNotContain("ScaledObject");
		assertThat(map(manifests.one("Deployment"), "spec")).containsEntry("replicas", 1);
	}

	@Test
	void minAndMaxReplicaCountAreRequired() {
		assertThatThrownBy(() -> render("autoscaling.enabled=true"))
			.hasMessageContaining("values don't meet the specifications of the schema")
			.hasMessageContaining("/autoscaling/minReplicaCount");
		assertThatThrownBy(() -> render("autoscaling.enabled=true", "autoscaling.minReplicaCount=1"))
			.hasMessageContaining("/autoscaling/maxReplicaCount");
		assertThatThrownBy(() -> render("autoscaling.enabled=true", "autoscaling.minReplicaCount=0",
				"autoscaling.maxReplicaCount=2"))
			.hasMessageContaining("/autoscaling/minReplicaCount");
		assertThatThrownBy(() -> render("autoscaling.enabled=true", "autoscaling.minReplicaCount=3",
				"autoscaling.maxReplicaCount=2"))
			.hasMessageContaining("autoscaling.minReplicaCount (3) must not be above autoscaling.maxReplicaCount (2)");
		assertThatThrownBy(() -> render(concat(ENABLED, "mode=standalone", "upstream.url=http://vllm:8000")))
			.hasMessageContaining("it needs mode sidecar");
		assertThatThrownBy(() -> render(concat(ENABLED, "autoscaling.behavior.scaleDown.stabilizationWindowSeconds=0")))
			.hasMessageContaining("scale down slower than up");
	}

	@Test
	void theScaledObjectIsValidByKedasSchemaAndAimsAtTheChartsDeployment() {
		for (String[] values : new String[][] { ENABLED, concat(ENABLED, EVERY_TRIGGER) }) {
			Manifests manifests = render(values);
			Map<String, Object> scaledObject = manifests.one("ScaledObject");
			assertValidScaledObject(scaledObject);
			Map<String, Object> spec = map(scaledObject, "spec");
			Map<String, Object> deployment = manifests.one("Deployment");
			assertThat(map(spec, "scaleTargetRef")).containsEntry("apiVersion", "apps/v1")
				.containsEntry("kind", "Deployment")
				.containsEntry("name", map(deployment, "metadata").get("name"));
			assertThat(map(deployment, "spec")).as("KEDA owns the replicas").doesNotContainKey("replicas");
			assertThat(spec).containsEntry("minReplicaCount", 1).containsEntry("maxReplicaCount", 4);
		}
	}

	@Test
	void kedasSchemaRefusesAMistypedFieldAndAWrongValue() {
		Map<String, Object> typo = new Yaml().load(new Yaml().dump(render(ENABLED).one("ScaledObject")));
		map(typo, "spec").put("minReplicas", 1);
		assertThat(kedaSchema().validate(JSON.<JsonNode>valueToTree(typo)).toString()).contains("minReplicas");
		Map<String, Object> wrong = new Yaml().load(new Yaml().dump(render(ENABLED).one("ScaledObject")));
		map(wrong, "spec").put("pollingInterval", "15s");
		list(map(wrong, "spec"), "triggers").get(0).put("type", "");
		assertThat(kedaSchema().validate(JSON.<JsonNode>valueToTree(wrong))).hasSize(2);
	}

	@Test
	void theEngineQueueAlwaysAndWhatClientsSeeOnRequest() {
		List<Map<String, Object>> queueOnly = triggers(render(ENABLED));
		assertThat(queueOnly).extracting((t) -> t.get("name")).containsExactly("engine-queue");
		Map<String, Object> queue = queueOnly.get(0);
		assertThat(queue).containsEntry("type", "prometheus").containsEntry("metricType", "AverageValue");
		assertThat(map(queue, "metadata")).containsEntry("threshold", "5")
			.containsEntry("serverAddress", "http://prometheus-operated.monitoring.svc:9090")
			.containsEntry("query",
					"sum(vllm:num_requests_waiting{job=\"vllm\",namespace=\"ml\",model_name=\"Qwen/Qwen2.5-1.5B-Instruct\"})");

		List<Map<String, Object>> all = triggers(render(concat(concat(ENABLED, EVERY_TRIGGER),
				"vllm.servedModelName=qwen", "autoscaling.prometheus.selector=cluster=\"eu\",namespace=\"ml\"")));
		assertThat(all).extracting((t) -> t.get("name"))
			.containsExactly("engine-queue", "client-ttft-p99", "client-stalled-share");
		assertThat(all).extracting((t) -> map(t, "metadata").get("query"))
			.containsExactly(
					"sum(vllm:num_requests_waiting{job=\"vllm\",cluster=\"eu\",namespace=\"ml\",model_name=\"qwen\"})",
					"max(cluster_model:tokengap_time_to_first_token_seconds:p99_rate5m{model_name=\"qwen\"})",
					"max(cluster_namespace_model:tokengap_stalled_gaps:ratio_rate5m{cluster=\"eu\",namespace=\"ml\",model_name=\"qwen\"})");
		assertThat(all.subList(1, 3)).allSatisfy((t) -> assertThat(t).containsEntry("metricType", "Value"));
		assertThat(all).extracting((t) -> map(t, "metadata").get("threshold")).containsExactly("5", "2", "0.01");
		for (Map<String, Object> trigger : all) {
			String query = (String) map(trigger, "metadata").get("query");
			for (String recorded : PromQl.series(query)) {
				if (!recorded.startsWith("vllm:")) {
					assertThat(AlertRules.recordings()).as("%s is recorded by the chart's rules", recorded)
						.containsKey(recorded);
				}
			}
		}
	}

	@Test
	@SuppressWarnings("unchecked")
	void scaleDownIsSlowerThanScaleUp() {
		Map<String, Object> behavior = map(
				map(map(map(render(ENABLED).one("ScaledObject"), "spec"), "advanced"), "horizontalPodAutoscalerConfig"),
				"behavior");
		Map<String, Object> up = map(behavior, "scaleUp");
		Map<String, Object> down = map(behavior, "scaleDown");
		assertThat((Integer) down.get("stabilizationWindowSeconds"))
			.isGreaterThan((Integer) up.get("stabilizationWindowSeconds"));
		Map<String, Object> upPolicy = list(up, "policies").get(0);
		Map<String, Object> downPolicy = list(down, "policies").get(0);
		assertThat(upPolicy).containsEntry("type", "Pods");
		assertThat(downPolicy).containsEntry("type", "Pods");
		double upPerSecond = ((Integer) upPolicy.get("value")).doubleValue() / (Integer) upPolicy.get("periodSeconds");
		double downPerSecond = ((Integer) downPolicy.get("value")).doubleValue()
				/ (Integer) downPolicy.get("periodSeconds");
		assertThat(downPerSecond).as("replicas a second, down vs up").isLessThan(upPerSecond);
	}

	/** The ScaledObject of the chart rendered with these values. */
	static Map<String, Object> scaledObject(String... values) {
		return render(values).one("ScaledObject");
	}

	static List<Map<String, Object>> triggers(Manifests manifests) {
		return list(map(manifests.one("ScaledObject"), "spec"), "triggers");
	}

	/**
	 * Valid by KEDA's CRD schema with unknown fields refused (kubectl's strict field
	 * validation), by its CEL rule, and with metadata Kubernetes accepts.
	 */
	static void assertValidScaledObject(Map<String, Object> scaledObject) {
		JsonNode object = JSON.valueToTree(scaledObject);
		List<Error> errors = kedaSchema().validate(object);
		assertThat(errors).as("by KEDA's ScaledObject schema: %s", errors).isEmpty();
		Map<String, Object> spec = map(scaledObject, "spec");
		assertThat((Integer) spec.get("minReplicaCount")).as("KEDA's CEL rule")
			.isLessThanOrEqualTo((Integer) spec.get("maxReplicaCount"));
		assertThat(scaledObject).containsEntry("apiVersion", "keda.sh/v1alpha1");
		StrictManifests.strict().convertValue(scaledObject.get("metadata"), ObjectMeta.class);
	}

	private static Schema kedaSchema() {
		Map<String, Object> crd = new Yaml().load(ProjectFiles.read(KEDA_CRD));
		List<Map<String, Object>> versions = list(map(crd, "spec"), "versions");
		Map<String, Object> v1alpha1 = versions.stream()
			.filter((v) -> "v1alpha1".equals(v.get("name")))
			.findFirst()
			.orElseThrow();
		JsonNode schema = JSON.valueToTree(map(map(v1alpha1, "schema"), "openAPIV3Schema"));
		refuseUnknownFields(schema);
		return SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_4).getSchema(schema.toString());
	}

	/**
	 * Every object schema with properties and no say about others refuses others, as the
	 * API server's strict field validation does (kubectl apply's default); OpenAPI's
	 * {@code x-kubernetes-*} keywords are dropped (the validator does not know them).
	 */
	private static void refuseUnknownFields(JsonNode node) {
		if (node instanceof ObjectNode object) {
			List<String> extensions = new ArrayList<>();
			object.fieldNames().forEachRemaining((name) -> {
				if (name.startsWith("x-kubernetes-")) {
					extensions.add(name);
				}
			});
			boolean open = object.path("x-kubernetes-preserve-unknown-fields").asBoolean(false);
			extensions.forEach(object::remove);
			if (object.has("properties") && !object.has("additionalProperties") && !open) {
				object.put("additionalProperties", false);
			}
			object.forEach(ChartAutoscalingTests::refuseUnknownFields);
		}
		else if (node != null && node.isArray()) {
			node.forEach(ChartAutoscalingTests::refuseUnknownFields);
		}
	}

	private static String[] concat(String[] a, String... b) {
		String[] all = new String[a.length + b.length];
		System.arraycopy(a, 0, all, 0, a.length);
		System.arraycopy(b, 0, all, a.length, b.length);
		return all;
	}

}
