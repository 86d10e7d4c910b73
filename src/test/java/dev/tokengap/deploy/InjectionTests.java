package dev.tokengap.deploy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.tokengap.deploy.StrictManifests.InferenceService;
import dev.tokengap.deploy.StrictManifests.Manifests;
import dev.tokengap.testsupport.ProjectFiles;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.ServicePortBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.Yaml;

import static dev.tokengap.deploy.InjectedPods.assertConfiguredLikeTheChart;
import static dev.tokengap.deploy.InjectedPods.assertEngineUnchangedButForItsPreStop;
import static dev.tokengap.deploy.InjectedPods.assertLockedDown;
import static dev.tokengap.deploy.InjectedPods.assertReachesEngineOnLoopback;
import static dev.tokengap.deploy.InjectedPods.container;
import static dev.tokengap.deploy.InjectedPods.env;
import static dev.tokengap.deploy.InjectedPods.sleep;
import static dev.tokengap.deploy.InjectedPods.tokengap;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The Kustomize Components of deploy/kustomize, built by the real Kustomize (kubectl
 * kustomize) over the hand-written vLLM manifests of shared/fixtures/k8s, the output
 * parsed strictly.
 */
class InjectionTests {

	static final Path COMPONENT = ProjectFiles.path("deploy/kustomize/tokengap-sidecar");

	static final Path EXAMPLES = ProjectFiles.path("deploy/kustomize/examples");

	@Test
	void aPlainDeploymentGetsOneTokengapBetweenItsServiceAndVllm() {
		Manifests input = StrictManifests.parse(K8sFixtures.read("manifests/plain-vllm.yaml"));
		Manifests output = StrictManifests.parse(Kustomize.build(EXAMPLES.resolve("plain-vllm")));
		Deployment before = input.named(Deployment.class, "qwen3-8b");
		Deployment after = output.named(Deployment.class, "qwen3-8b");
		PodSpec pod = after.getSpec().getTemplate().getSpec();
		Container tokengap = tokengap(pod);
		assertConfiguredLikeTheChart(tokengap);

		Container engine = container(pod, "vllm");
		assertThat(pod.getContainers().get(0)).as("the engine stays the first (kubectl's default) container")
			.isSameAs(engine);
		int enginePause = assertEngineUnchangedButForItsPreStop(
				before.getSpec().getTemplate().getSpec().getContainers().get(0), engine);
		Map<String, String> annotations = after.getSpec().getTemplate().getMetadata().getAnnotations();
		assertReachesEngineOnLoopback(tokengap, annotations, engine, 8000);
		ShutdownOrder.assertMirrorsTheChart(pod, tokengap, enginePause);
		assertThat(pod.getVolumes()).as("the engine's volumes kept, tokengap's /tmp added")
			.containsAll(before.getSpec().getTemplate().getSpec().getVolumes())
			.anySatisfy((v) -> assertThat(v.getName()).isEqualTo("tokengap-tmp"));
		assertThat(after.getSpec().getReplicas()).isEqualTo(3);
		assertThat(after.getSpec().getSelector()).isEqualTo(before.getSpec().getSelector());
		assertThat(after.getSpec().getTemplate().getMetadata().getLabels())
			.as("the pod's labels, and one to select injected pods by (a PodMonitor)")
			.containsAllEntriesOf(before.getSpec().getTemplate().getMetadata().getLabels())
			.containsEntry("tokengap.dev/injected", "true");

		assertServiceReachesTokengap(input.named(Service.class, "qwen3-8b"), output.named(Service.class, "qwen3-8b"),
				tokengap);
	}

	@Test
	void thePlainExampleIsTheFixtureWithTheInjectLabelOnTheDeploymentAndTheService() {
		List<Object> fixture = documents(K8sFixtures.read("manifests/plain-vllm.yaml"));
		List<Object> example = documents(ProjectFiles.read("deploy/kustomize/examples/plain-vllm/vllm.yaml"));
		for (Object document : example) {
			@SuppressWarnings("unchecked")
			Map<String, Map<String, Object>> object = (Map<String, Map<String, Object>>) document;
			@SuppressWarnings("unchecked")
			Map<String, String> labels = (Map<String, String>) object.get("metadata").get("labels");
			assertThat(labels.remove("tokengap.dev/inject")).isEqualTo("true");
			if (labels.isEmpty()) {
				object.get("metadata").remove("labels");
			}
		}
		assertThat(example).isEqualTo(fixture);
	}

	/**
	 * A workload on another port gets it by a patch after the Component (not from its
	 * manifest); a StatefulSet is injected like a Deployment; unlabelled objects are left
	 * alone; the image follows an images: entry.
	 */
	@Test
	void anotherEnginePortAStatefulSetUnlabelledObjectsAndTheImage(@TempDir Path dir) throws IOException {
		Files.writeString(dir.resolve("workloads.yaml"),
				"""
						apiVersion: apps/v1
						kind: StatefulSet
						metadata: {name: engine, labels: {tokengap.dev/inject: "true"}}
						spec:
						  serviceName: engine
						  selector: {matchLabels: {app: engine}}
						  template:
						    metadata: {labels: {app: engine}}
						    spec:
						      containers:
						        - {name: vllm, image: vllm/vllm-openai:v0.29.0, args: [--port, "8200"], ports: [{name: http, containerPort: 8200}]}
						---
						apiVersion: apps/v1
						kind: Deployment
						metadata: {name: annotated, labels: {tokengap.dev/inject: "true"}}
						spec:
						  selector: {matchLabels: {app: annotated}}
						  template:
						    metadata: {labels: {app: annotated}, annotations: {tokengap.dev/engine-port: "9000"}}
						    spec:
						      containers: [{name: vllm, image: vllm/vllm-openai:v0.29.0, args: [--port, "9000"]}]
						---
						apiVersion: apps/v1
						kind: Deployment
						metadata: {name: router}
						spec:
						  selector: {matchLabels: {app: router}}
						  template:
						    metadata: {labels: {app: router}}
						    spec:
						      containers: [{name: router, image: router:1, args: [--port, "8000"]}]
						---
						apiVersion: v1
						kind: Service
						metadata: {name: router}
						spec: {selector: {app: router}, ports: [{port: 80, targetPort: 8000}]}
						""");
		Files.writeString(dir.resolve("kustomization.yaml"), """
				resources: [workloads.yaml]
				components: [%s]
				images: [{name: tokengap, newName: registry.example.com/ml/tokengap, newTag: "0.1.0"}]
				patches:
				  - target: {kind: StatefulSet, name: engine}
				    patch: |-
				      apiVersion: apps/v1
				      kind: StatefulSet
				      metadata: {name: engine}
				      spec: {template: {metadata: {annotations: {tokengap.dev/engine-port: "8200"}}}}
				""".formatted(dir.relativize(COMPONENT)));
		Manifests output = StrictManifests.parse(Kustomize.build(dir));

		StatefulSet engine = output.named(StatefulSet.class, "engine");
		PodSpec pod = engine.getSpec().getTemplate().getSpec();
		Container tokengap = tokengap(pod);
		assertThat(tokengap.getImage()).isEqualTo("registry.example.com/ml/tokengap:0.1.0");
		assertReachesEngineOnLoopback(tokengap, engine.getSpec().getTemplate().getMetadata().getAnnotations(),
				container(pod, "vllm"), 8200);

		Deployment annotated = output.named(Deployment.class, "annotated");
		assertThat(annotated.getSpec().getTemplate().getMetadata().getAnnotations())
			.as("the manifest's own annotation is kept")
			.containsEntry("tokengap.dev/engine-port", "9000");
		assertReachesEngineOnLoopback(tokengap(annotated.getSpec().getTemplate().getSpec()),
				annotated.getSpec().getTemplate().getMetadata().getAnnotations(),
				container(annotated.getSpec().getTemplate().getSpec(), "vllm"), 9000);

		Deployment router = output.named(Deployment.class, "router");
		assertThat(router.getSpec().getTemplate().getSpec().getContainers()).extracting(Container::getName)
			.containsExactly("router");
		assertThat(router.getSpec().getTemplate().getSpec().getTerminationGracePeriodSeconds()).isNull();
		assertThat(router.getSpec().getTemplate().getMetadata().getAnnotations()).isNullOrEmpty();
		assertThat(output.named(Service.class, "router").getSpec().getPorts().get(0).getTargetPort())
			.isEqualTo(new IntOrString(8000));
	}

	/**
	 * Knative routes to the one container that declares a port: tokengap declares 8080,
	 * vLLM none, and vLLM moves to 8000, where tokengap's annotation points.
	 */
	@Test
	void kserveRoutesToTokengapsOneDeclaredPortAndVllmMovesTo8000() {
		Manifests input = StrictManifests.parse(K8sFixtures.read("manifests/kserve-vllm.yaml"));
		Manifests output = StrictManifests.parse(Kustomize.build(EXAMPLES.resolve("kserve-vllm")));
		InferenceService before = input.inferenceService();
		InferenceService after = output.inferenceService();
		PodSpec pod = after.pod();
		Container tokengap = tokengap(pod);

		assertThat(pod.getContainers()).filteredOn((c) -> !c.getPorts().isEmpty())
			.as("the one container with ports")
			.containsExactly(tokengap);
		assertThat(tokengap.getPorts()).extracting(ContainerPort::getContainerPort).containsExactly(8080);
		assertThat(tokengap.getPorts().get(0).getName()).as("Knative takes only http1 or h2c as a name").isNull();
		Container engineBefore = before.pod().getContainers().get(0);
		Container engine = container(pod, "kserve-container");
		assertThat(engineBefore.getPorts()).extracting(ContainerPort::getContainerPort).containsExactly(8080);
		assertThat(InjectedPods.listenPort(engineBefore)).isEqualTo(8080);
		Container moved = new ContainerBuilder(engineBefore).withPorts()
			.withCommand(engineBefore.getCommand().stream().map((w) -> w.equals("8080") ? "8000" : w).toList())
			.build();
		int enginePause = assertEngineUnchangedButForItsPreStop(moved, engine);

		Map<String, String> annotations = after.podAnnotations();
		assertReachesEngineOnLoopback(tokengap, annotations, engine, 8000);
		assertThat(tokengap.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/actuator/health/readiness");
		assertThat(tokengap.getReadinessProbe().getHttpGet().getPort()).isEqualTo(new IntOrString(8081));
		assertThat(tokengap.getLivenessProbe().getHttpGet().getPort()).isEqualTo(new IntOrString(8081));
		assertThat(env(tokengap, annotations)).containsEntry("MANAGEMENT_SERVER_PORT", "8081");
		assertLockedDown(tokengap);
		assertThat(pod.getVolumes()).anySatisfy((v) -> assertThat(v.getName()).isEqualTo("tokengap-tmp"));

		int preStop = Integer.parseInt(sleep(tokengap));
		int drain = ShutdownOrder.drainSeconds(tokengap, annotations);
		assertThat(enginePause).as("the engine outlives tokengap's drain").isEqualTo(preStop + drain);
		assertThat(pod.getTerminationGracePeriodSeconds()).as("Knative's: the revision timeout").isNull();
		assertThat(after.predictor()).as("no timeout set: Knative's 300 s outlasts %d s", enginePause)
			.doesNotContainKey("timeout")
			.containsEntry("minReplicas", 1);
		assertThat(after.metadata().getAnnotations()).isEqualTo(before.metadata().getAnnotations());
	}

	/**
	 * A predictor the KServe Component cannot inject without replacing something of the
	 * operator's fails the build on the test op that says what.
	 */
	@Test
	void kserveRefusesAnEngineWithHooksASecondContainerOrVolumesOfItsOwn(@TempDir Path dir) throws IOException {
		String hooks = "lifecycle: {postStart: {exec: {command: [warm]}}}";
		Map<String, String> refused = Map.of("hooks", "containers/0/lifecycle", "second", "containers/1/name",
				"volumes", "volumes");
		for (Map.Entry<String, String> shape : refused.entrySet()) {
			Path caseDir = Files.createDirectories(dir.resolve(shape.getKey()));
			Files.writeString(caseDir.resolve("isvc.yaml"), """
					apiVersion: serving.kserve.io/v1beta1
					kind: InferenceService
					metadata: {name: m, labels: {tokengap.dev/inject: "true"}}
					spec:
					  predictor:
					    %s
					    containers:
					      - {name: kserve-container, image: vllm/vllm-openai:v0.29.0, ports: [{containerPort: 8080}]%s}
					      %s
					""".formatted(shape.getKey().equals("volumes") ? "volumes: [{name: cache, emptyDir: {}}]" : "",
					shape.getKey().equals("hooks") ? ", " + hooks : "",
					shape.getKey().equals("second") ? "- {name: shipper, image: fluent/fluent-bit:3.2}" : ""));
			Files.writeString(caseDir.resolve("kustomization.yaml"), "resources: [isvc.yaml]\ncomponents: [%s]\n"
				.formatted(caseDir.relativize(ProjectFiles.path("deploy/kustomize/tokengap-kserve"))));
			Kustomize.Result result = Kustomize.tryBuild(caseDir);
			assertThat(result.exit()).as(shape.getKey()).isNotZero();
			assertThat(result.stdout()).isEmpty();
			assertThat(result.stderr()).contains("testing value /spec/predictor/" + shape.getValue() + " failed");
		}
	}

	@Test
	void theStrictParserRejectsAFieldKubernetesDoesNotDefine() {
		String typo = """
				apiVersion: apps/v1
				kind: Deployment
				metadata: {name: x}
				spec:
				  selector: {matchLabels: {app: x}}
				  template:
				    metadata: {labels: {app: x}}
				    spec:
				      containers: [{name: x, image: x, ports: [{containerPort: 8080, nmae: http}]}]
				""";
		assertThatThrownBy(() -> StrictManifests.parse(typo)).hasMessageContaining("nmae");
		assertThatThrownBy(() -> StrictManifests.parse("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n"))
			.hasMessageContaining("a kind these tests know");
	}

	/**
	 * The Service keeps its port, name and selector; its first port now targets
	 * tokengap's proxy.
	 */
	static void assertServiceReachesTokengap(Service before, Service after, Container tokengap) {
		assertThat(after.getSpec().getSelector()).isEqualTo(before.getSpec().getSelector());
		ServicePort first = after.getSpec().getPorts().get(0);
		assertThat(first.getTargetPort()).isEqualTo(new IntOrString("tokengap"));
		assertThat(InjectedPods.port(tokengap, first.getTargetPort().getStrVal())).isEqualTo(InjectedPods.PROXY_PORT);
		ServicePort firstBefore = before.getSpec().getPorts().get(0);
		assertThat(first)
			.isEqualTo(new ServicePortBuilder(firstBefore).withTargetPort(new IntOrString("tokengap")).build());
		assertThat(after.getSpec().getPorts().subList(1, after.getSpec().getPorts().size()))
			.as("its other ports as they were")
			.isEqualTo(before.getSpec().getPorts().subList(1, before.getSpec().getPorts().size()));
	}

	private static List<Object> documents(String yaml) {
		List<Object> documents = new ArrayList<>();
		new Yaml().loadAll(yaml).forEach((d) -> {
			if (d != null) {
				documents.add(d);
			}
		});
		return documents;
	}

}
