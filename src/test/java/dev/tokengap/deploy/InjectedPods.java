package dev.tokengap.deploy;

import java.net.URI;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.SecurityContext;

import dev.tokengap.proxy.UpstreamProperties;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What every injected pod must show, whichever platform it came from: one tokengap
 * container configured like helm/tokengap's, pointed at the engine on loopback, and the
 * engine as it was.
 */
final class InjectedPods {

	static final int PROXY_PORT = 8080;

	static final int MANAGEMENT_PORT = 8081;

	private static final Pattern VARIABLE = Pattern.compile("\\$\\(([A-Za-z_][A-Za-z0-9_]*)\\)");

	private InjectedPods() {
	}

	/** The one tokengap container (by name and by image). */
	static Container tokengap(PodSpec pod) {
		List<Container> byName = pod.getContainers().stream().filter((c) -> "tokengap".equals(c.getName())).toList();
		assertThat(byName).as("containers named tokengap").hasSize(1);
		assertThat(pod.getContainers()).filteredOn((c) -> c.getImage().contains("tokengap"))
			.as("containers running a tokengap image")
			.hasSize(1);
		assertThat(pod.getInitContainers()).noneMatch((c) -> c.getImage().contains("tokengap"));
		return byName.get(0);
	}

	static Container container(PodSpec pod, String name) {
		return pod.getContainers()
			.stream()
			.filter((c) -> name.equals(c.getName()))
			.findFirst()
			.orElseThrow(() -> new AssertionError("no container " + name));
	}

	/**
	 * The injected engine is the input's but for a preStop pause; returns that pause in
	 * seconds.
	 */
	static int assertEngineUnchangedButForItsPreStop(Container before, Container after) {
		assertThat(before.getLifecycle()).as("the input engine had no lifecycle hooks").isNull();
		int pause = Integer.parseInt(sleep(after));
		Container withoutHook = new ContainerBuilder(after).withLifecycle(null).build();
		assertThat(withoutHook)
			.as("engine container %s: command, ports, probes, env, resources, mounts as they were", before.getName())
			.isEqualTo(before);
		return pause;
	}

	/**
	 * The environment of a container as the kubelet resolves it (fieldRef, then $(VAR)).
	 */
	static Map<String, String> env(Container container, Map<String, String> podAnnotations) {
		Map<String, String> env = new HashMap<>();
		for (EnvVar var : container.getEnv()) {
			String value;
			if (var.getValueFrom() != null) {
				String path = var.getValueFrom().getFieldRef().getFieldPath();
				Matcher annotation = Pattern.compile("metadata\\.annotations\\['(.+)'\\]").matcher(path);
				assertThat(annotation.matches()).as("fieldRef %s", path).isTrue();
				value = podAnnotations.getOrDefault(annotation.group(1), "");
			}
			else {
				value = expand(var.getValue(), env);
			}
			env.put(var.getName(), value);
		}
		return env;
	}

	/**
	 * tokengap's container matches helm/tokengap's sidecar container, ports and probes
	 * renamed.
	 */
	static void assertConfiguredLikeTheChart(Container tokengap) {
		assertThat(port(tokengap, "tokengap")).isEqualTo(PROXY_PORT);
		assertThat(port(tokengap, "tokengap-mgmt")).isEqualTo(MANAGEMENT_PORT);
		assertThat(tokengap.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/actuator/health/readiness");
		assertThat(tokengap.getReadinessProbe().getHttpGet().getPort()).isEqualTo(new IntOrString("tokengap-mgmt"));
		assertThat(tokengap.getLivenessProbe().getHttpGet().getPath()).isEqualTo("/actuator/health/liveness");
		assertThat(tokengap.getLivenessProbe().getHttpGet().getPort()).isEqualTo(new IntOrString("tokengap-mgmt"));
		assertThat(tokengap.getStartupProbe().getHttpGet().getPath()).isEqualTo("/actuator/health/liveness");
		assertLockedDown(tokengap);
	}

	/**
	 * Non-root, read-only root filesystem (with /tmp mounted), no escalation, no
	 * capabilities.
	 */
	static void assertLockedDown(Container tokengap) {
		SecurityContext security = tokengap.getSecurityContext();
		assertThat(security.getRunAsNonRoot()).isTrue();
		assertThat(security.getRunAsUser()).as("the image's UID, or the platform's (OpenShift)").isNull();
		assertThat(security.getReadOnlyRootFilesystem()).isTrue();
		assertThat(security.getAllowPrivilegeEscalation()).isFalse();
		assertThat(security.getPrivileged()).isNotEqualTo(Boolean.TRUE);
		assertThat(security.getCapabilities().getDrop()).containsExactly("ALL");
		assertThat(security.getCapabilities().getAdd()).isNullOrEmpty();
		assertThat(security.getSeccompProfile().getType()).isEqualTo("RuntimeDefault");
		assertThat(tokengap.getVolumeMounts()).anySatisfy((m) -> assertThat(m.getMountPath()).isEqualTo("/tmp"));
		assertThat(tokengap.getResources().getLimits()).containsEntry("memory", new Quantity("512Mi"));
		assertThat(tokengap.getEnv()).anySatisfy((variable) -> {
			assertThat(variable.getName()).isEqualTo("JAVA_TOOL_OPTIONS");
			assertThat(variable.getValue()).as("the image's JVM defaults (the chart's for a 250m request)")
				.isEqualTo(imageJavaToolOptions());
		});
		assertThat(tokengap.getResources().getRequests()).containsKeys("cpu", "memory");
	}

	/**
	 * The {@code JAVA_TOOL_OPTIONS} the image sets (docker/Dockerfile), which the chart's
	 * tests hold equal to its own.
	 */
	static String imageJavaToolOptions() {
		try {
			String dockerfile = java.nio.file.Files.readString(java.nio.file.Path.of("docker/Dockerfile"));
			java.util.regex.Matcher matcher = Pattern.compile("ENV JAVA_TOOL_OPTIONS=\"([^\"]*)\"").matcher(dockerfile);
			assertThat(matcher.find()).as("JAVA_TOOL_OPTIONS in docker/Dockerfile").isTrue();
			return matcher.group(1);
		}
		catch (java.io.IOException ex) {
			throw new java.io.UncheckedIOException(ex);
		}
	}

	/**
	 * tokengap proxies to 127.0.0.1 at the annotated port, and that is where the engine
	 * listens (its --port), which no tokengap port takes.
	 */
	static void assertReachesEngineOnLoopback(Container tokengap, Map<String, String> podAnnotations, Container engine,
			int enginePort) {
		Map<String, String> annotations = (podAnnotations != null) ? podAnnotations : Map.of();
		Map<String, String> env = env(tokengap, annotations);
		// As tokengap reads it: a missing annotation is an empty port, vLLM's default.
		URI upstream = new UpstreamProperties(URI.create(env.get("TOKENGAP_UPSTREAM_URL")), Duration.ofMinutes(10),
				Duration.ofMinutes(5), Duration.ofSeconds(5), 2048, Duration.ofSeconds(4), Duration.ofSeconds(5),
				Duration.ofMinutes(10), null)
			.url();
		assertThat(upstream.getHost()).isEqualTo("127.0.0.1");
		assertThat(upstream.getPort()).as("the engine port tokengap uses").isEqualTo(enginePort);
		assertThat(env).containsEntry("SERVER_PORT", String.valueOf(PROXY_PORT))
			.containsEntry("MANAGEMENT_SERVER_PORT", String.valueOf(MANAGEMENT_PORT));
		assertThat(listenPort(engine)).as("the engine's --port").isEqualTo(enginePort);
		assertThat(tokengap.getPorts()).extracting(ContainerPort::getContainerPort).doesNotContain(enginePort);
	}

	/**
	 * The port vLLM listens on, from its command and args ({@code --port N} or
	 * {@code --port=N}).
	 */
	static int listenPort(Container engine) {
		List<String> words = Stream.concat(engine.getCommand().stream(), engine.getArgs().stream()).toList();
		for (int i = 0; i < words.size(); i++) {
			if (words.get(i).startsWith("--port=")) {
				return Integer.parseInt(words.get(i).substring("--port=".length()));
			}
			if (words.get(i).equals("--port") && i + 1 < words.size()) {
				return Integer.parseInt(words.get(i + 1));
			}
		}
		throw new AssertionError("no --port in " + words);
	}

	static int port(Container container, String name) {
		return container.getPorts()
			.stream()
			.filter((p) -> name.equals(p.getName()))
			.map(ContainerPort::getContainerPort)
			.findFirst()
			.orElseThrow(() -> new AssertionError("no port " + name + " on " + container.getName()));
	}

	/** The seconds of a container's {@code preStop: exec: [sleep, N]}. */
	static String sleep(Container container) {
		List<String> command = container.getLifecycle().getPreStop().getExec().getCommand();
		assertThat(command).hasSize(2).startsWith("sleep");
		return command.get(1);
	}

	private static String expand(String value, Map<String, String> env) {
		Matcher matcher = VARIABLE.matcher(value);
		StringBuilder out = new StringBuilder();
		while (matcher.find()) {
			assertThat(env).as("$(%s) is defined before it is used", matcher.group(1)).containsKey(matcher.group(1));
			matcher.appendReplacement(out, Matcher.quoteReplacement(env.get(matcher.group(1))));
		}
		matcher.appendTail(out);
		return out.toString();
	}

}
