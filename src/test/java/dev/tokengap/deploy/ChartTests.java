package dev.tokengap.deploy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import com.marcnuri.helm.TemplateCommand;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

import dev.tokengap.testsupport.ProjectFiles;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The Helm chart, rendered by the real Helm (helm-java) with no cluster: lint, the
 * sidecar and standalone modes with default values and with every optional feature, and
 * the essentials of the manifests. Monitoring mode, the values schema, the pod options
 * and the JVM sizing have their own {@code Chart*Tests}.
 */
class ChartTests {

	static final Path CHART = ProjectFiles.path("helm/tokengap");

	static final String[] ALL_FEATURES = { "serviceMonitor.enabled=true", "prometheusRule.enabled=true",
			"grafanaDashboards.enabled=true", "networkPolicy.enabled=true", "podDisruptionBudget.enabled=true",
			"networkPolicy.monitoring[0].namespaceSelector.matchLabels.team=monitoring" };

	@Test
	void lintsCleanInStrictMode() {
		LintResult result = new Helm(CHART).lint().strict().call();
		assertThat(result.isFailed()).as("helm lint --strict: %s", result.getMessages()).isFalse();
		assertThat(result.getMessages()).noneMatch((m) -> m.contains("[WARNING]") || m.contains("[ERROR]"));
	}

	@Test
	void sidecarModeByDefaultRunsVllmAndTokengapInOnePodBehindTokengapsPort() {
		Manifests manifests = render();
		assertThat(manifests.kinds()).containsExactlyInAnyOrder("ServiceAccount", "Service", "Service", "Deployment");
		Map<String, Object> pod = manifests.podSpec();
		assertThat(names(list(pod, "containers"))).containsExactly("vllm", "tokengap");

		Map<String, Object> vllm = container(pod, "vllm");
		assertThat(string(vllm, "image")).isEqualTo("vllm/vllm-openai:v0.11.0");
		assertThat(strings(vllm, "args")).contains("--model=Qwen/Qwen2.5-1.5B-Instruct", "--port=8000");
		assertThat(port(vllm, "vllm")).isEqualTo(8000);
		for (String probe : List.of("startupProbe", "livenessProbe", "readinessProbe")) {
			assertThat(map(map(vllm, probe), "httpGet")).as(probe)
				.containsEntry("path", "/health")
				.containsEntry("port", "vllm");
		}
		assertThat(map(map(vllm, "resources"), "limits")).containsEntry("nvidia.com/gpu", 1);

		Map<String, Object> tokengap = container(pod, "tokengap");
		assertThat(env(tokengap)).containsEntry("TOKENGAP_UPSTREAM_URL", "http://127.0.0.1:8000");
		assertTokengapEssentials(tokengap, pod);

		Map<String, Object> service = manifests.named("Service", "rel-tokengap");
		Map<String, Object> servicePort = list(map(service, "spec"), "ports").get(0);
		assertThat(servicePort).containsEntry("port", 8000).containsEntry("targetPort", "http");
		assertThat(port(tokengap, "http")).as("the Service's target is tokengap's proxy port").isEqualTo(8080);
		assertThat(names(list(map(manifests.named("Service", "rel-tokengap-metrics"), "spec"), "ports")))
			.containsExactly("management", "vllm");
	}

	@Test
	void standaloneModeFrontsAnExistingVllmService() {
		Manifests manifests = render("mode=standalone", "upstream.url=http://vllm.inference.svc:8000");
		Map<String, Object> pod = manifests.podSpec();
		assertThat(names(list(pod, "containers"))).containsExactly("tokengap");
		Map<String, Object> tokengap = container(pod, "tokengap");
		assertThat(env(tokengap)).containsEntry("TOKENGAP_UPSTREAM_URL", "http://vllm.inference.svc:8000");
		assertTokengapEssentials(tokengap, pod);
		assertThat(names(list(map(manifests.named("Service", "rel-tokengap-metrics"), "spec"), "ports")))
			.containsExactly("management");
	}

	@Test
	void standaloneModeWithoutUpstreamUrlOrAnUnknownModeIsRefused() {
		assertThatThrownBy(() -> render("mode=standalone")).hasMessageContaining("standalone mode needs upstream.url");
		assertThatThrownBy(() -> render("mode=daemonset"))
			.hasMessageContaining("at '/mode': value must be one of 'sidecar', 'standalone', 'monitoring'");
	}

	@Test
	void drainTimeoutDrivesSpringsShutdownPhaseAndTheGracePeriod() {
		Manifests manifests = render("drainTimeout=120", "preStopSleepSeconds=10", "terminationGraceMarginSeconds=20");
		Map<String, Object> pod = manifests.podSpec();
		assertThat(pod).containsEntry("terminationGracePeriodSeconds", 150);
		Map<String, Object> tokengap = container(pod, "tokengap");
		assertThat(env(tokengap)).containsEntry("SPRING_LIFECYCLE_TIMEOUTPERSHUTDOWNPHASE", "120s");
		assertThat(preStop(tokengap)).containsExactly("sleep", "10");
		assertThat(preStop(container(pod, "vllm"))).as("the engine outlives tokengap's drain")
			.containsExactly("sleep", "130");
	}

	/**
	 * The kubelet kills the pod at the grace period: it must outlast tokengap's preStop
	 * pause and its whole drain, with time left for the JVM to exit, or streams the drain
	 * promises to let finish are killed first.
	 */
	@Test
	void theGracePeriodOutlastsThePreStopPauseAndTheDrain() {
		for (String[] values : new String[][] { {}, { "drainTimeout=120", "preStopSleepSeconds=10" },
				{ "drainTimeout=5", "preStopSleepSeconds=0", "terminationGraceMarginSeconds=1" } }) {
			Map<String, Object> pod = render(values).podSpec();
			Map<String, Object> tokengap = container(pod, "tokengap");
			String phase = env(tokengap).get("SPRING_LIFECYCLE_TIMEOUTPERSHUTDOWNPHASE");
			int drain = Integer.parseInt(phase.replace("s", ""));
			int preStop = Integer.parseInt(preStop(tokengap).get(1));
			assertThat((Integer) pod.get("terminationGracePeriodSeconds")).as("grace period for %s", List.of(values))
				.isGreaterThan(preStop + drain);
		}
		assertThatThrownBy(() -> render("terminationGraceMarginSeconds=0"))
			.hasMessageContaining("terminationGraceMarginSeconds must be at least 1");
	}

	@Test
	void everyOptionalFeatureRendersInBothModes() {
		for (String[] mode : new String[][] { { "mode=sidecar" },
				{ "mode=standalone", "upstream.url=http://vllm.inference.svc:8000" } }) {
			boolean sidecar = mode[0].equals("mode=sidecar");
			Manifests manifests = render(concat(mode, ALL_FEATURES));
			assertThat(manifests.kinds()).contains("ServiceMonitor", "PrometheusRule", "ConfigMap", "NetworkPolicy",
					"PodDisruptionBudget");
			assertServiceMonitor(manifests, sidecar);
			assertThat(manifests.one("PrometheusRule").get("spec")).as("the rules file, embedded unchanged")
				.isEqualTo(new Yaml().load(ProjectFiles.read(AlertRules.FILE)));
			assertDashboardConfigMaps(manifests);
			Map<String, Object> policy = map(manifests.one("NetworkPolicy"), "spec");
			List<Map<String, Object>> ingress = list(policy, "ingress");
			assertThat(ingress.get(0).get("ports").toString()).contains("port=http");
			assertThat(ingress.get(1).get("ports").toString()).contains("port=management");
			assertThat(ingress.get(1).get("ports").toString().contains("port=vllm")).isEqualTo(sidecar);
			assertThat(map(manifests.one("PodDisruptionBudget"), "spec")).containsEntry("maxUnavailable", 1);
		}
	}

	@Test
	void chartDashboardsAreLinksToTheGrafanaDirectory() throws IOException {
		List<String> grafana;
		try (Stream<Path> files = Files.list(ProjectFiles.path("grafana"))) {
			grafana = files.map((f) -> f.getFileName().toString()).filter((n) -> n.endsWith(".json")).sorted().toList();
		}
		List<String> chart;
		try (Stream<Path> files = Files.list(CHART.resolve("dashboards"))) {
			chart = files.map((f) -> f.getFileName().toString()).sorted().toList();
		}
		assertThat(chart).as("helm/tokengap/dashboards/ mirrors grafana/").isEqualTo(grafana);
		for (String name : chart) {
			Path link = CHART.resolve("dashboards").resolve(name);
			assertThat(Files.isSymbolicLink(link)).as("%s is a symlink (one source: grafana/)", link).isTrue();
			assertThat(link.toRealPath()).isEqualTo(ProjectFiles.path("grafana/" + name).toRealPath());
		}
	}

	private static void assertTokengapEssentials(Map<String, Object> tokengap, Map<String, Object> pod) {
		assertThat(string(tokengap, "image")).isEqualTo("tokengap:0.1.0");
		assertThat(port(tokengap, "http")).isEqualTo(8080);
		assertThat(port(tokengap, "management")).isEqualTo(8081);
		assertThat(map(map(tokengap, "livenessProbe"), "httpGet")).containsEntry("path", "/actuator/health/liveness")
			.containsEntry("port", "management");
		assertThat(map(map(tokengap, "readinessProbe"), "httpGet")).containsEntry("path", "/actuator/health/readiness")
			.containsEntry("port", "management");
		Map<String, Object> security = map(tokengap, "securityContext");
		assertThat(security).containsEntry("runAsNonRoot", true)
			.doesNotContainKeys("runAsUser", "runAsGroup")
			.containsEntry("readOnlyRootFilesystem", true)
			.containsEntry("allowPrivilegeEscalation", false);
		assertThat(map(security, "capabilities")).containsEntry("drop", List.of("ALL"));
		assertThat(list(tokengap, "volumeMounts"))
			.anySatisfy((mount) -> assertThat(mount).containsEntry("name", "tmp").containsEntry("mountPath", "/tmp"));
		assertThat(list(pod, "volumes"))
			.anySatisfy((volume) -> assertThat(volume).containsEntry("name", "tmp").containsKey("emptyDir"));
		assertThat(map(map(tokengap, "resources"), "limits")).containsKey("memory");
		assertThat(env(tokengap)).containsEntry("SPRING_LIFECYCLE_TIMEOUTPERSHUTDOWNPHASE", "30s")
			.containsEntry("MANAGEMENT_SERVER_PORT", "8081");
		assertThat(pod).as("preStop 5 + drain 30 + margin 10").containsEntry("terminationGracePeriodSeconds", 45);
		assertThat(preStop(tokengap)).containsExactly("sleep", "5");
	}

	private static void assertServiceMonitor(Manifests manifests, boolean sidecar) {
		Map<String, Object> spec = map(manifests.one("ServiceMonitor"), "spec");
		Map<String, Object> selector = map(map(spec, "selector"), "matchLabels");
		assertThat(map(map(manifests.named("Service", "rel-tokengap-metrics"), "metadata"), "labels"))
			.as("the ServiceMonitor selects the metrics Service")
			.containsAllEntriesOf(selector);
		assertThat(map(map(manifests.named("Service", "rel-tokengap"), "metadata"), "labels"))
			.as("and not the clients' Service")
			.doesNotContainEntry("app.kubernetes.io/component", "metrics");
		List<Map<String, Object>> endpoints = list(spec, "endpoints");
		assertThat(endpoints.get(0)).containsEntry("port", "management").containsEntry("path", "/actuator/prometheus");
		assertThat(list(endpoints.get(0), "relabelings").get(0)).as("job=\"tokengap\", as TokengapDown expects")
			.containsEntry("targetLabel", "job")
			.containsEntry("replacement", "tokengap");
		if (sidecar) {
			assertThat(endpoints).hasSize(2);
			assertThat(endpoints.get(1)).containsEntry("port", "vllm").containsEntry("path", "/metrics");
			assertThat(list(endpoints.get(1), "relabelings").get(0)).containsEntry("replacement", "vllm");
		}
		else {
			assertThat(endpoints).hasSize(1);
		}
	}

	private static void assertDashboardConfigMaps(Manifests manifests) {
		List<Map<String, Object>> configMaps = manifests.all("ConfigMap");
		assertThat(configMaps).hasSize(Dashboards.load().size());
		for (Map<String, Object> configMap : configMaps) {
			assertThat(map(map(configMap, "metadata"), "labels")).containsEntry("grafana_dashboard", "1");
			Map<String, Object> data = map(configMap, "data");
			assertThat(data).hasSize(1);
			String file = data.keySet().iterator().next();
			assertThat(data.get(file)).as("%s is grafana/%s byte for byte", file, file)
				.isEqualTo(ProjectFiles.read("grafana/" + file));
		}
	}

	static Manifests render(String... values) {
		return render(null, values);
	}

	/** Renders with a values file (null for none) and then the --set values. */
	static Manifests render(Path valuesFile, String... values) {
		TemplateCommand template = new Helm(CHART).template()
			.withName("rel")
			.withNamespace("ml")
			.withKubeVersion("v1.31.0");
		if (valuesFile != null) {
			template = template.withValuesFile(valuesFile);
		}
		for (String value : values) {
			int eq = value.indexOf('=');
			template = template.set(value.substring(0, eq), value.substring(eq + 1));
		}
		return Manifests.parse(template.call());
	}

	/** The rendered objects, each checked to be a Kubernetes object. */
	record Manifests(List<Map<String, Object>> objects) {

		@SuppressWarnings("unchecked")
		static Manifests parse(String yaml) {
			List<Map<String, Object>> objects = new ArrayList<>();
			for (Object document : new Yaml().loadAll(yaml)) {
				if (document == null) {
					continue;
				}
				Map<String, Object> object = (Map<String, Object>) document;
				assertThat(object).containsKeys("apiVersion", "kind", "metadata");
				assertThat(map(object, "metadata")).containsKey("name");
				objects.add(object);
			}
			return new Manifests(objects);
		}

		List<String> kinds() {
			return this.objects.stream().map((o) -> (String) o.get("kind")).toList();
		}

		List<Map<String, Object>> all(String kind) {
			return this.objects.stream().filter((o) -> kind.equals(o.get("kind"))).toList();
		}

		Map<String, Object> one(String kind) {
			List<Map<String, Object>> all = all(kind);
			assertThat(all).as(kind).hasSize(1);
			return all.get(0);
		}

		Map<String, Object> named(String kind, String name) {
			return all(kind).stream()
				.filter((o) -> name.equals(map(o, "metadata").get("name")))
				.findFirst()
				.orElseThrow(() -> new AssertionError("no " + kind + " " + name));
		}

		Map<String, Object> podSpec() {
			return map(map(map(one("Deployment"), "spec"), "template"), "spec");
		}

	}

	@SuppressWarnings("unchecked")
	static Map<String, Object> map(Map<String, Object> parent, String key) {
		Object value = parent.get(key);
		assertThat(value).as(key).isInstanceOf(Map.class);
		return (Map<String, Object>) value;
	}

	@SuppressWarnings("unchecked")
	static List<Map<String, Object>> list(Map<String, Object> parent, String key) {
		Object value = parent.get(key);
		assertThat(value).as(key).isInstanceOf(List.class);
		return (List<Map<String, Object>>) value;
	}

	@SuppressWarnings("unchecked")
	static List<String> strings(Map<String, Object> parent, String key) {
		return (List<String>) parent.get(key);
	}

	static String string(Map<String, Object> parent, String key) {
		return (String) parent.get(key);
	}

	static List<String> names(List<Map<String, Object>> items) {
		return items.stream().map((item) -> (String) item.get("name")).toList();
	}

	static Map<String, Object> container(Map<String, Object> pod, String name) {
		return list(pod, "containers").stream()
			.filter((c) -> name.equals(c.get("name")))
			.findFirst()
			.orElseThrow(() -> new AssertionError("no container " + name));
	}

	static int port(Map<String, Object> container, String name) {
		return list(container, "ports").stream()
			.filter((p) -> name.equals(p.get("name")))
			.map((p) -> (Integer) p.get("containerPort"))
			.findFirst()
			.orElseThrow(() -> new AssertionError("no port " + name));
	}

	static Map<String, String> env(Map<String, Object> container) {
		Map<String, String> env = new LinkedHashMap<>();
		list(container, "env").forEach((e) -> env.put((String) e.get("name"), String.valueOf(e.get("value"))));
		return env;
	}

	@SuppressWarnings("unchecked")
	static List<String> preStop(Map<String, Object> container) {
		return (List<String>) map(map(map(container, "lifecycle"), "preStop"), "exec").get("command");
	}

	private static String[] concat(String[] a, String[] b) {
		String[] all = new String[a.length + b.length];
		System.arraycopy(a, 0, all, 0, a.length);
		System.arraycopy(b, 0, all, a.length, b.length);
		return all;
	}

}
