package dev.tokengap.deploy;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.TemplateCommand;
import dev.tokengap.deploy.Kustomize.Result;
import dev.tokengap.deploy.StrictManifests.Manifests;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import org.junit.jupiter.api.Test;

import static dev.tokengap.deploy.InjectedPods.assertConfiguredLikeTheChart;
import static dev.tokengap.deploy.InjectedPods.assertEngineUnchangedButForItsPreStop;
import static dev.tokengap.deploy.InjectedPods.assertReachesEngineOnLoopback;
import static dev.tokengap.deploy.InjectedPods.container;
import static dev.tokengap.deploy.InjectedPods.tokengap;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Helm post-renderer (deploy/helm-post-renderer) over the production-stack and llm-d
 * charts: rendered by the real Helm (helm-java), then the script with the real Kustomize,
 * as {@code helm install --post-renderer} runs it; the output parsed strictly.
 */
class InjectionChartTests {

	static final String ENGINE = "llm-opt125m-deployment-vllm";

	static final String ROUTER = "llm-deployment-router";

	static final String DECODE = "llm-llm-d-modelservice-decode";

	@Test
	void productionStackEnginesGetTokengapAndTheRouterCallsItsPort() {
		String rendered = renderProductionStack();
		Manifests input = StrictManifests.parse(rendered);
		Manifests output = StrictManifests
			.parse(Kustomize.postRender(rendered, Map.of(), "production-stack").successfully());

		Deployment engine = output.named(Deployment.class, ENGINE);
		PodSpec pod = engine.getSpec().getTemplate().getSpec();
		Container tokengap = tokengap(pod);
		assertConfiguredLikeTheChart(tokengap);
		Container vllm = container(pod, "vllm");
		int enginePause = assertEngineUnchangedButForItsPreStop(
				input.named(Deployment.class, ENGINE).getSpec().getTemplate().getSpec().getContainers().get(0), vllm);
		assertThat(InjectedPods.port(vllm, "container-port")).as("vLLM keeps 8000 (and its /metrics there)")
			.isEqualTo(8000);
		assertReachesEngineOnLoopback(tokengap, engine.getSpec().getTemplate().getMetadata().getAnnotations(), vllm,
				8000);
		ShutdownOrder.assertMirrorsTheChart(pod, tokengap, enginePause);

		Deployment router = output.named(Deployment.class, ROUTER);
		List<Container> routerContainers = router.getSpec().getTemplate().getSpec().getContainers();
		assertThat(routerContainers).as("never a sidecar-mode tokengap in front of the router")
			.extracting(Container::getName)
			.containsExactly("router-container");
		List<String> args = routerContainers.get(0).getArgs();
		List<String> argsBefore = input.named(Deployment.class, ROUTER)
			.getSpec()
			.getTemplate()
			.getSpec()
			.getContainers()
			.get(0)
			.getArgs();
		assertThat(args).startsWith(argsBefore.toArray(String[]::new)).endsWith("--k8s-port", "8080");
		assertThat(args.subList(argsBefore.size(), args.size())).containsExactly("--k8s-port", "8080");
		assertThat(Integer.parseInt(args.get(args.size() - 1))).as("the router calls tokengap's proxy port")
			.isEqualTo(InjectedPods.port(tokengap, "tokengap"));
		assertThat(engine.getSpec().getTemplate().getMetadata().getLabels())
			.as("the router's --k8s-label-selector finds the injected pods")
			.containsAllEntriesOf(selector(argsBefore.get(argsBefore.indexOf("--k8s-label-selector") + 1)));

		InjectionTests.assertServiceReachesTokengap(input.named(Service.class, "llm-opt125m-engine-service"),
				output.named(Service.class, "llm-opt125m-engine-service"), tokengap);
		assertUnchangedBut(input, output, ENGINE, ROUTER, "llm-opt125m-engine-service");
	}

	@Test
	void llmDDecodePodsRouteSidecarToTokengapToVllmOn8200() {
		String rendered = renderLlmD();
		Manifests input = StrictManifests.parse(rendered);
		Manifests output = StrictManifests.parse(Kustomize.postRender(rendered, Map.of(), "llm-d").successfully());

		Deployment decode = output.named(Deployment.class, DECODE);
		PodSpec pod = decode.getSpec().getTemplate().getSpec();
		Container tokengap = tokengap(pod);
		assertConfiguredLikeTheChart(tokengap);
		PodSpec podBefore = input.named(Deployment.class, DECODE).getSpec().getTemplate().getSpec();
		Container vllm = container(pod, "vllm");
		int enginePause = assertEngineUnchangedButForItsPreStop(podBefore.getContainers().get(0), vllm);
		assertReachesEngineOnLoopback(tokengap, decode.getSpec().getTemplate().getMetadata().getAnnotations(), vllm,
				8200);
		ShutdownOrder.assertMirrorsTheChart(pod, tokengap, enginePause);

		Container sidecar = pod.getInitContainers().get(0);
		Container sidecarBefore = podBefore.getInitContainers().get(0);
		assertThat(sidecar.getName()).isEqualTo("routing-proxy");
		assertThat(sidecar.getRestartPolicy()).as("a native sidecar: it outlives tokengap and vLLM")
			.isEqualTo("Always");
		assertThat(sidecar.getArgs()).contains("--port=8000", "--vllm-port=" + InjectedPods.PROXY_PORT);
		assertThat(sidecar).as("the routing sidecar changes only its target")
			.isEqualTo(new ContainerBuilder(sidecarBefore)
				.withArgs(sidecarBefore.getArgs()
					.stream()
					.map((a) -> a.equals("--vllm-port=8200") ? "--vllm-port=8080" : a)
					.toList())
				.build());
		assertThat(sidecar.getPorts()).extracting(ContainerPort::getContainerPort).containsExactly(8000);
		assertThat(tokengap.getPorts()).extracting(ContainerPort::getContainerPort).doesNotContain(8000, 8200);

		assertThat(output.named(Deployment.class, "llm-llm-d-modelservice-prefill")).as("prefill pods are not injected")
			.isEqualTo(input.named(Deployment.class, "llm-llm-d-modelservice-prefill"));
		assertUnchangedBut(input, output, DECODE);
	}

	/**
	 * A chart whose routing sidecar no longer targets 8200 as expected fails the render,
	 * loudly.
	 */
	@Test
	void anLlmDSidecarThatLooksDifferentFailsThePostRenderer() {
		Result result = Kustomize.postRender(renderLlmD("routing.proxy.targetPort=8300"), Map.of(), "llm-d");
		assertThat(result.exit()).isNotZero();
		assertThat(result.stdout()).isEmpty();
		assertThat(result.stderr()).contains("/spec/template/spec/initContainers/0/args/1", "test failed")
			.contains("the chart no longer renders what the profile expects");
	}

	@Test
	void withoutAProfileOnlyWhatTheChartLabelsIsInjectedAndTheImageCanBeReplaced() {
		String rendered = renderProductionStack();
		Manifests plain = StrictManifests.parse(Kustomize.postRender(rendered, Map.of()).successfully());
		assertThat(plain.objects()).as("Kustomize reorders by kind, changes nothing")
			.containsExactlyInAnyOrderElementsOf(StrictManifests.parse(rendered).objects());

		Manifests output = StrictManifests.parse(
				Kustomize
					.postRender(rendered, Map.of("TOKENGAP_IMAGE", "registry.example.com/ml/tokengap:0.1.0"),
							"production-stack")
					.successfully());
		assertThat(tokengap(output.named(Deployment.class, ENGINE).getSpec().getTemplate().getSpec()).getImage())
			.isEqualTo("registry.example.com/ml/tokengap:0.1.0");
	}

	@Test
	void anUnknownProfileIsRefused() {
		Result result = Kustomize.postRender("", Map.of(), "kserve");
		assertThat(result.exit()).isEqualTo(2);
		assertThat(result.stderr()).contains("no profile 'kserve'").contains("production-stack").contains("llm-d");
	}

	static String renderProductionStack() {
		return new Helm(K8sFixtures.path("charts/production-stack")).template()
			.withName("llm")
			.withNamespace("inference")
			.withKubeVersion("v1.31.0")
			.withValuesFile(K8sFixtures.path("charts/production-stack/values-example.yaml"))
			.call();
	}

	static String renderLlmD(String... values) {
		TemplateCommand template = new Helm(K8sFixtures.path("charts/llm-d-modelservice")).template()
			.withName("llm")
			.withNamespace("inference")
			.withKubeVersion("v1.31.0");
		for (String value : values) {
			int eq = value.indexOf('=');
			template = template.set(value.substring(0, eq), value.substring(eq + 1));
		}
		return template.call();
	}

	/**
	 * Every object but the named ones is in the output exactly as the chart rendered it.
	 */
	private static void assertUnchangedBut(Manifests input, Manifests output, String... changed) {
		List<String> names = List.of(changed);
		List<Object> untouched = input.objects()
			.stream()
			.filter((o) -> !names.contains(((HasMetadata) o).getMetadata().getName()))
			.toList();
		assertThat(output.objects()).hasSameSizeAs(input.objects()).containsAll(untouched);
	}

	private static Map<String, String> selector(String labelSelector) {
		return Arrays.stream(labelSelector.split(","))
			.map((pair) -> pair.split("=", 2))
			.collect(Collectors.toMap((kv) -> kv[0], (kv) -> kv[1]));
	}

}
