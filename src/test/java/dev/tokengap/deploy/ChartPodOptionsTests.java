package dev.tokengap.deploy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import dev.tokengap.deploy.ChartTests.Manifests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static dev.tokengap.deploy.ChartTests.container;
import static dev.tokengap.deploy.ChartTests.list;
import static dev.tokengap.deploy.ChartTests.map;
import static dev.tokengap.deploy.ChartTests.render;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Pod options: the runtime class and scheduler, extra volumes for vLLM, extra objects,
 * and a tokengap UID left to the platform (OpenShift's restricted SCC assigns one).
 */
class ChartPodOptionsTests {

	@Test
	void runtimeClassAndSchedulerAreSetOnlyWhenGiven() {
		Map<String, Object> pod = render("runtimeClassName=nvidia", "schedulerName=volcano").podSpec();
		assertThat(pod).containsEntry("runtimeClassName", "nvidia").containsEntry("schedulerName", "volcano");
		assertThat(render().podSpec()).doesNotContainKeys("runtimeClassName", "schedulerName");
	}

	@Test
	void extraVolumesAreMountedInTheVllmContainer() {
		Map<String, Object> pod = render("extraVolumes[0].name=models",
				"extraVolumes[0].persistentVolumeClaim.claimName=models", "vllm.extraVolumeMounts[0].name=models",
				"vllm.extraVolumeMounts[0].mountPath=/models", "vllm.extraVolumeMounts[0].readOnly=true")
			.podSpec();
		assertThat(list(pod, "volumes"))
			.contains(Map.of("name", "models", "persistentVolumeClaim", Map.of("claimName", "models")));
		assertThat(list(container(pod, "vllm"), "volumeMounts")).as("after the chart's own mounts")
			.containsExactly(Map.of("name", "dshm", "mountPath", "/dev/shm"),
					Map.of("name", "model-cache", "mountPath", "/root/.cache/huggingface"),
					Map.of("name", "models", "mountPath", "/models", "readOnly", true));
		assertThat(list(container(pod, "tokengap"), "volumeMounts")).extracting((m) -> m.get("name"))
			.containsExactly("tmp");
	}

	@Test
	void extraObjectsAreTemplatedAndRenderedAsIsInEveryMode(@TempDir Path dir) throws IOException {
		Path values = dir.resolve("extra-objects.yaml");
		Files.writeString(values, """
				extraObjects:
				  - apiVersion: v1
				    kind: Secret
				    metadata:
				      name: '{{ include "tokengap.fullname" . }}-hf'
				    stringData:
				      token: abc
				  - |
				    apiVersion: v1
				    kind: ConfigMap
				    metadata:
				      name: extra-{{ .Release.Namespace }}
				    data:
				      a: b
				""");
		for (String mode : List.of("mode=sidecar", "mode=monitoring")) {
			Manifests manifests = render(values, mode);
			assertThat(manifests.named("Secret", "rel-tokengap-hf")).containsEntry("stringData",
					Map.of("token", "abc"));
			assertThat(manifests.named("ConfigMap", "extra-ml")).containsEntry("data", Map.of("a", "b"));
		}
		assertThat(render().kinds()).doesNotContain("Secret", "ConfigMap");
	}

	@Test
	void tokengapsUidIsLeftToTheImageOrThePlatformButNonRootIsAlwaysRequired() {
		Map<String, Object> security = map(container(render().podSpec(), "tokengap"), "securityContext");
		assertThat(security).containsEntry("runAsNonRoot", true).doesNotContainKeys("runAsUser", "runAsGroup");
		Map<String, Object> pinned = map(container(
				render("tokengap.securityContext.runAsUser=10001", "tokengap.securityContext.runAsGroup=10001")
					.podSpec(),
				"tokengap"), "securityContext");
		assertThat(pinned).containsEntry("runAsUser", 10001)
			.containsEntry("runAsGroup", 10001)
			.containsEntry("runAsNonRoot", true);
	}

}
