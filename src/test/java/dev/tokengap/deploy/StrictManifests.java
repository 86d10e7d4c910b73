package dev.tokengap.deploy;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import com.fasterxml.jackson.databind.BeanDescription;
import com.fasterxml.jackson.databind.DeserializationConfig;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.deser.BeanDeserializerBuilder;
import com.fasterxml.jackson.databind.deser.BeanDeserializerModifier;
import com.fasterxml.jackson.databind.module.SimpleModule;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import org.yaml.snakeyaml.Yaml;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Rendered manifests parsed strictly as Kubernetes objects: each document by its
 * apiVersion and kind into fabric8's model, and a field the API does not define fails the
 * parse. fabric8's classes collect unknown fields in an "additional properties" map; this
 * parser removes that catch-all, so FAIL_ON_UNKNOWN_PROPERTIES applies. A kind it does
 * not know fails too.
 */
final class StrictManifests {

	private static final ObjectMapper STRICT = strictMapper();

	private static final Map<String, Class<? extends HasMetadata>> KINDS = Map.of("apps/v1 Deployment",
			Deployment.class, "apps/v1 StatefulSet", StatefulSet.class, "v1 Service", Service.class,
			"v1 ServiceAccount", ServiceAccount.class, "v1 Secret", Secret.class, "v1 PersistentVolumeClaim",
			PersistentVolumeClaim.class, "v1 ConfigMap", ConfigMap.class, "rbac.authorization.k8s.io/v1 Role",
			Role.class, "rbac.authorization.k8s.io/v1 RoleBinding", RoleBinding.class);

	/**
	 * KServe's ComponentExtensionSpec fields, inlined in a predictor beside the pod spec.
	 */
	private static final Set<String> PREDICTOR_EXTENSION = Set.of("minReplicas", "maxReplicas", "scaleTarget",
			"scaleMetric", "scaleMetricType", "containerConcurrency", "timeout", "canaryTrafficPercent", "logger",
			"batcher", "labels", "annotations", "deploymentStrategy", "autoScaling", "workerSpec");

	private StrictManifests() {
	}

	/**
	 * A KServe InferenceService: its metadata, predictor extension fields and predictor
	 * pod spec.
	 */
	record InferenceService(ObjectMeta metadata, Map<String, Object> predictor, PodSpec pod) {

		@SuppressWarnings("unchecked")
		Map<String, String> podAnnotations() {
			return (Map<String, String>) this.predictor.getOrDefault("annotations", Map.of());
		}

	}

	/** The parsed objects, in document order. */
	record Manifests(List<Object> objects) {

		<T> List<T> all(Class<T> type) {
			return this.objects.stream().filter(type::isInstance).map(type::cast).toList();
		}

		<T extends HasMetadata> T named(Class<T> type, String name) {
			return all(type).stream()
				.filter((o) -> name.equals(o.getMetadata().getName()))
				.findFirst()
				.orElseThrow(() -> new AssertionError("no " + type.getSimpleName() + " " + name));
		}

		InferenceService inferenceService() {
			List<InferenceService> all = all(InferenceService.class);
			assertThat(all).hasSize(1);
			return all.get(0);
		}

	}

	@SuppressWarnings("unchecked")
	static Manifests parse(String yaml) {
		List<Object> objects = new ArrayList<>();
		for (Object document : new Yaml().loadAll(yaml)) {
			if (document != null) {
				objects.add(object((Map<String, Object>) document));
			}
		}
		return new Manifests(objects);
	}

	/**
	 * The strict mapper: a field fabric8's model does not define fails the conversion.
	 */
	static ObjectMapper strict() {
		return STRICT;
	}

	/** The pod template of a Deployment or StatefulSet. */
	static PodTemplateSpec template(HasMetadata workload) {
		if (workload instanceof Deployment deployment) {
			return deployment.getSpec().getTemplate();
		}
		if (workload instanceof StatefulSet statefulSet) {
			return statefulSet.getSpec().getTemplate();
		}
		throw new AssertionError("not a workload: " + workload.getKind());
	}

	@SuppressWarnings("unchecked")
	private static Object object(Map<String, Object> document) {
		String key = document.get("apiVersion") + " " + document.get("kind");
		if ("serving.kserve.io/v1beta1 InferenceService".equals(key)) {
			assertThat(document.keySet()).containsOnly("apiVersion", "kind", "metadata", "spec");
			Map<String, Object> spec = (Map<String, Object>) document.get("spec");
			assertThat(spec.keySet()).as("InferenceService spec").containsOnly("predictor");
			Map<String, Object> predictor = new LinkedHashMap<>((Map<String, Object>) spec.get("predictor"));
			Map<String, Object> extension = new LinkedHashMap<>();
			PREDICTOR_EXTENSION.forEach((field) -> {
				if (predictor.containsKey(field)) {
					extension.put(field, predictor.remove(field));
				}
			});
			return new InferenceService(STRICT.convertValue(document.get("metadata"), ObjectMeta.class), extension,
					STRICT.convertValue(predictor, PodSpec.class));
		}
		Class<? extends HasMetadata> type = KINDS.get(key);
		assertThat(type).as("a kind these tests know: %s", key).isNotNull();
		HasMetadata object = STRICT.convertValue(document, type);
		assertThat(object.getMetadata().getName()).as("%s has a name", key).isNotBlank();
		return object;
	}

	private static ObjectMapper strictMapper() {
		SimpleModule noCatchAll = new SimpleModule().setDeserializerModifier(new BeanDeserializerModifier() {
			@Override
			public BeanDeserializerBuilder updateBuilder(DeserializationConfig config, BeanDescription description,
					BeanDeserializerBuilder builder) {
				if (description.getBeanClass().getName().startsWith("io.fabric8.")) {
					builder.setAnySetter(null);
				}
				return builder;
			}
		});
		return new ObjectMapper().registerModule(noCatchAll)
			.enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
			.enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
			.enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY);
	}

}
