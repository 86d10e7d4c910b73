package dev.tokengap.deploy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.HasMetadata;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.Yaml;

import dev.tokengap.deploy.Kustomize.Result;
import dev.tokengap.deploy.StrictManifests.Manifests;
import dev.tokengap.testsupport.ProjectFiles;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Nothing of the operator's is dropped: the engine pods of
 * {@code src/test/resources/deploy/injection-matrix.yaml} (no hooks, postStart only,
 * preStop only, both, the engine behind a log shipper, an init container, the engine
 * found by its --port or by name, an HTTP preStop) and the rendered production-stack and
 * llm-d charts, injected by the real Kustomize through the Component and through the
 * post-renderer. Every field of each workload is compared with the input's: what may
 * differ is tokengap's container and volume, the injected label, the engine's preStop
 * pause (added, or merged into its own hook) and the grace period. Where an injector
 * cannot do that, the build fails, and says why.
 */
class InjectionMatrixTests {

	static final String MATRIX = "src/test/resources/deploy/injection-matrix.yaml";

	static final Map<String, Object> PAUSE = Map.of("exec", Map.of("command", List.of("sleep", "35")));

	/** The post-renderer's merged exec hook: the pause, then the operator's command. */
	static final List<String> MERGED = List.of("/bin/sh", "-c", "sleep 35; exec \"$@\"", "tokengap-pause");

	/** The engine's preStop left exactly as it was. */
	static final Map<String, Object> KEPT = Map.of();

	/**
	 * The Component injects a pod whose engine is its only container and has no hooks
	 * (init containers aside); every other shape fails the build on the test op that says
	 * why, with no output.
	 */
	@Test
	void theComponentInjectsThePodsItCanCheckAndRefusesTheOthers(@TempDir Path dir) throws IOException {
		Map<String, String> refused = Map.of("post-start", "containers/0/lifecycle", "pre-stop",
				"containers/0/lifecycle", "both-hooks", "containers/0/lifecycle", "http-pre-stop",
				"containers/0/lifecycle", "http-pre-stop-kept", "containers/0/lifecycle", "behind-log-shipper",
				"containers/1/name", "engine-by-args", "containers/1/name", "engine-by-name", "containers/1/name",
				"ambiguous", "containers/1/name");
		List<String> injected = new ArrayList<>();
		for (Map<String, Object> workload : matrix()) {
			String name = name(workload);
			Path caseDir = Files.createDirectories(dir.resolve(name));
			Files.writeString(caseDir.resolve("workload.yaml"), new Yaml().dump(workload));
			Files.writeString(caseDir.resolve("kustomization.yaml"), "resources: [workload.yaml]\ncomponents: [%s]\n"
				.formatted(caseDir.relativize(InjectionTests.COMPONENT)));
			Result result = Kustomize.tryBuild(caseDir);
			if (refused.containsKey(name)) {
				assertThat(result.exit()).as("%s is refused", name).isNotZero();
				assertThat(result.stdout()).as(name).isEmpty();
				assertThat(result.stderr()).as(name)
					.contains("testing value /spec/template/spec/" + refused.get(name) + " failed");
			}
			else {
				assertInjectedExactly(workload, one(result.successfully()), "vllm", PAUSE, 45, (w) -> {
				});
				injected.add(name);
			}
		}
		assertThat(injected).containsExactlyInAnyOrder("no-hooks", "init-container");
	}

	/**
	 * The post-renderer, one pod at a time: the engine found by its port, its --port or
	 * its name; postStart kept; the pause added, or merged into an exec or sleep preStop
	 * with the grace period raised so the operator's hook keeps its time; a kept hook
	 * left alone.
	 */
	@Test
	void thePostRendererInjectsEveryShapeKeepingEveryFieldOfTheEngine() {
		for (Map<String, Object> workload : matrix()) {
			String name = name(workload);
			Result result = Kustomize.postRender(new Yaml().dump(workload), Map.of());
			switch (name) {
				case "ambiguous" -> assertRefused(result, "Deployment inference/ambiguous",
						"cannot tell which container is the engine", "tokengap.dev/engine-container");
				case "http-pre-stop" ->
					assertRefused(result, "Deployment inference/http-pre-stop", "preStop httpGet hook of its own",
							"make the hook an exec command", "tokengap.dev/engine-prestop: \"keep\"");
				default -> assertInjectedByThePostRenderer(workload, one(result.successfully()));
			}
		}
	}

	/**
	 * Several workloads in one render, as a chart renders them: each patch reaches its
	 * own workload's engine, at its own position.
	 */
	@Test
	void thePostRendererInjectsManyWorkloadsAtOnceEachAtItsOwnEngine() {
		List<Map<String, Object>> workloads = matrix().stream()
			.filter((w) -> !List.of("ambiguous", "http-pre-stop").contains(name(w)))
			.toList();
		String output = Kustomize.postRender(new Yaml().dumpAll(workloads.iterator()), Map.of()).successfully();
		StrictManifests.parse(output);
		List<Map<String, Object>> injected = documents(output);
		assertThat(injected).hasSameSizeAs(workloads);
		for (Map<String, Object> workload : workloads) {
			assertInjectedByThePostRenderer(workload, named(injected, name(workload)));
		}
		Result refused = Kustomize.postRender(new Yaml().dumpAll(matrix().iterator()), Map.of());
		assertThat(refused.exit()).as("one refused workload fails the whole render").isNotZero();
		assertThat(refused.stdout()).isEmpty();
	}

	/**
	 * The merged hook, run by a real shell with a 0 s pause: the operator's command runs
	 * after it word for word (no re-splitting, no expansion).
	 */
	@Test
	void theMergedHookRunsTheOperatorsCommandWordForWordAfterThePause() throws Exception {
		Map<String, Object> preStop = preStop(
				engine(one(Kustomize.postRender(new Yaml().dump(named(matrix(), "pre-stop")), Map.of()).successfully()),
						"vllm"));
		@SuppressWarnings("unchecked")
		List<String> merged = (List<String>) ((Map<String, Object>) preStop.get("exec")).get("command");
		List<String> prefix = new ArrayList<>(merged.subList(0, MERGED.size()));
		assertThat(prefix).isEqualTo(MERGED);
		prefix.set(2, prefix.get(2).replace("sleep 35", "sleep 0"));
		List<String> operator = List.of("printf", "%s\\n", "a b", "$HOSTNAME", "c\"d", "*");
		List<String> command = new ArrayList<>(prefix);
		command.addAll(operator);
		Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
		assertThat(process.waitFor(10, TimeUnit.SECONDS)).isTrue();
		assertThat(process.exitValue()).isZero();
		assertThat(new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8))
			.isEqualTo("a b\n$HOSTNAME\nc\"d\n*\n");
	}

	/**
	 * The rendered production-stack and llm-d charts: every field of the engine
	 * Deployment kept but the profile's label (and llm-d's engine-port annotation and
	 * routing-sidecar target) and the injection's documented additions.
	 */
	@Test
	void theRenderedChartsKeepEveryFieldOfTheirEngineWorkloads() {
		String stack = InjectionChartTests.renderProductionStack();
		Map<String, Object> engine = named(documents(stack), InjectionChartTests.ENGINE);
		assertInjectedExactly(engine,
				named(documents(Kustomize.postRender(stack, Map.of(), "production-stack").successfully()),
						InjectionChartTests.ENGINE),
				"vllm", PAUSE, 45, (w) -> labels(w).put("tokengap.dev/inject", "true"));

		String llmD = InjectionChartTests.renderLlmD();
		Map<String, Object> decode = named(documents(llmD), InjectionChartTests.DECODE);
		assertInjectedExactly(decode, named(documents(Kustomize.postRender(llmD, Map.of(), "llm-d").successfully()),
				InjectionChartTests.DECODE), "vllm", PAUSE, 45, (w) -> {
					labels(w).put("tokengap.dev/inject", "true");
					map(template(w), "metadata").computeIfAbsent("annotations", (k) -> new LinkedHashMap<>());
					annotations(w).put("tokengap.dev/engine-port", "8200");
					@SuppressWarnings("unchecked")
					List<String> args = (List<String>) list(podSpec(w), "initContainers").get(0).get("args");
					args.set(args.indexOf("--vllm-port=8200"), "--vllm-port=8080");
				});
	}

	private static void assertInjectedByThePostRenderer(Map<String, Object> workload, Map<String, Object> after) {
		String name = name(workload);
		switch (name) {
			case "no-hooks", "post-start", "behind-log-shipper", "init-container" ->
				assertInjectedExactly(workload, after, "vllm", PAUSE, 45, (w) -> {
				});
			case "engine-by-args" -> assertInjectedExactly(workload, after, "engine", PAUSE, 45, (w) -> {
			});
			// The operator's hook runs after the pause, with its 30 s (the default) or 60
			// s.
			case "pre-stop" ->
				assertInjectedExactly(workload, after, "vllm", merged(workload, "vllm"), 30 + 35, (w) -> {
				});
			case "both-hooks" ->
				assertInjectedExactly(workload, after, "vllm", merged(workload, "vllm"), 60 + 35, (w) -> {
				});
			case "engine-by-name" -> assertInjectedExactly(workload, after, "main",
					Map.of("sleep", Map.of("seconds", 10 + 35)), 30 + 35, (w) -> {
					});
			case "http-pre-stop-kept" -> assertInjectedExactly(workload, after, "vllm", KEPT, 120, (w) -> {
			});
			default -> throw new AssertionError("no expectation for " + name);
		}
	}

	private static void assertRefused(Result result, String... says) {
		assertThat(result.exit()).isNotZero();
		assertThat(result.stdout()).isEmpty();
		assertThat(result.stderr()).contains(says);
	}

	/**
	 * The output workload is the input with, and only with: {@code profile}'s changes,
	 * the injected label, tokengap appended to the containers and its /tmp to the
	 * volumes, the engine's preStop as expected ({@link #KEPT}: unchanged), and the grace
	 * period. tokengap's container itself is checked against the chart's.
	 */
	static void assertInjectedExactly(Map<String, Object> before, Map<String, Object> after, String engineName,
			Map<String, Object> preStop, int grace, Consumer<Map<String, Object>> profile) {
		Map<String, Object> expected = copy(before);
		profile.accept(expected);
		Map<String, Object> template = template(expected);
		map(template, "metadata").computeIfAbsent("labels", (k) -> new LinkedHashMap<>());
		labels(template).put("tokengap.dev/injected", "true");
		Map<String, Object> pod = podSpec(expected);
		Map<String, Object> tokengap = container(podSpec(after), "tokengap");
		List<Map<String, Object>> containers = list(pod, "containers");
		Map<String, Object> engine = container(pod, engineName);
		if (preStop != KEPT) {
			engine.computeIfAbsent("lifecycle", (k) -> new LinkedHashMap<>());
			map(engine, "lifecycle").put("preStop", preStop);
		}
		containers.add(tokengap);
		pod.computeIfAbsent("volumes", (k) -> new ArrayList<>());
		list(pod, "volumes").add(Map.of("name", "tokengap-tmp", "emptyDir", Map.of("sizeLimit", "64Mi")));
		pod.put("terminationGracePeriodSeconds", grace);
		assertThat(normalized(after)).as("%s, every field", name(before)).isEqualTo(normalized(expected));

		Manifests strict = StrictManifests.parse(new Yaml().dump(after));
		HasMetadata workload = (HasMetadata) strict.objects().get(0);
		Container parsed = InjectedPods.tokengap(StrictManifests.template(workload).getSpec());
		InjectedPods.assertConfiguredLikeTheChart(parsed);
		assertThat(containers.indexOf(engine)).as("the engine stays where it was")
			.isEqualTo(list(podSpec(before), "containers").indexOf(container(podSpec(before), engineName)));
	}

	/** The engine's own exec preStop after the pause. */
	@SuppressWarnings("unchecked")
	private static Map<String, Object> merged(Map<String, Object> workload, String engineName) {
		List<String> own = (List<String>) ((Map<String, Object>) preStop(engine(workload, engineName)).get("exec"))
			.get("command");
		List<String> command = new ArrayList<>(MERGED);
		command.addAll(own);
		return Map.of("exec", Map.of("command", command));
	}

	static List<Map<String, Object>> matrix() {
		return documents(ProjectFiles.read(MATRIX));
	}

	@SuppressWarnings("unchecked")
	static List<Map<String, Object>> documents(String yaml) {
		List<Map<String, Object>> documents = new ArrayList<>();
		for (Object document : new Yaml().loadAll(yaml)) {
			if (document != null) {
				documents.add((Map<String, Object>) document);
			}
		}
		return documents;
	}

	private static Map<String, Object> one(String yaml) {
		List<Map<String, Object>> documents = documents(yaml);
		assertThat(documents).hasSize(1);
		return documents.get(0);
	}

	static Map<String, Object> named(List<Map<String, Object>> objects, String name) {
		return objects.stream()
			.filter((o) -> name.equals(name(o)) && List.of("Deployment", "StatefulSet").contains(o.get("kind")))
			.findFirst()
			.orElseThrow(() -> new AssertionError("no workload " + name));
	}

	private static String name(Map<String, Object> object) {
		return (String) map(object, "metadata").get("name");
	}

	private static Map<String, Object> template(Map<String, Object> workload) {
		return map(map(workload, "spec"), "template");
	}

	private static Map<String, Object> podSpec(Map<String, Object> workload) {
		return map(template(workload), "spec");
	}

	@SuppressWarnings("unchecked")
	private static Map<String, String> labels(Map<String, Object> objectOrTemplate) {
		return (Map<String, String>) (Object) map(map(objectOrTemplate, "metadata"), "labels");
	}

	@SuppressWarnings("unchecked")
	private static Map<String, String> annotations(Map<String, Object> workload) {
		return (Map<String, String>) (Object) map(map(template(workload), "metadata"), "annotations");
	}

	private static Map<String, Object> engine(Map<String, Object> workload, String name) {
		return container(podSpec(workload), name);
	}

	private static Map<String, Object> container(Map<String, Object> pod, String name) {
		return ChartTests.container(pod, name);
	}

	private static Map<String, Object> preStop(Map<String, Object> container) {
		return map(map(container, "lifecycle"), "preStop");
	}

	private static Map<String, Object> map(Map<String, Object> parent, String key) {
		return ChartTests.map(parent, key);
	}

	private static List<Map<String, Object>> list(Map<String, Object> parent, String key) {
		return ChartTests.list(parent, key);
	}

	/** A deep, mutable copy. */
	@SuppressWarnings("unchecked")
	private static <T> T copy(T value) {
		if (value instanceof Map<?, ?> map) {
			Map<String, Object> copy = new LinkedHashMap<>();
			map.forEach((k, v) -> copy.put((String) k, copy(v)));
			return (T) copy;
		}
		if (value instanceof List<?> list) {
			List<Object> copy = new ArrayList<>();
			list.forEach((v) -> copy.add(copy(v)));
			return (T) copy;
		}
		return value;
	}

	/**
	 * Without null-valued keys ({@code env:} with nothing after it is no field at all to
	 * Kubernetes), as Kustomize may write them either way, and the pod's volumes by name
	 * (a strategic merge puts tokengap's first; Kubernetes refers to volumes by name
	 * only).
	 */
	@SuppressWarnings("unchecked")
	private static Object normalized(Object value) {
		if (value instanceof Map<?, ?> map) {
			Map<Object, Object> normalized = new LinkedHashMap<>();
			map.forEach((k, v) -> {
				if (v != null) {
					normalized.put(k, normalized(v));
				}
			});
			if (normalized.get("volumes") instanceof List<?> volumes) {
				normalized.put("volumes",
						volumes.stream()
							.sorted(Comparator.comparing((v) -> String.valueOf(((Map<String, Object>) v).get("name"))))
							.toList());
			}
			return normalized;
		}
		if (value instanceof List<?> list) {
			return list.stream().map(InjectionMatrixTests::normalized).toList();
		}
		return value;
	}

}
