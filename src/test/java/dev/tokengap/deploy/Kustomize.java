package dev.tokengap.deploy;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.tokengap.testsupport.Executables;
import dev.tokengap.testsupport.ProjectFiles;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs the real Kustomize ({@code kubectl kustomize}) and the Helm post-renderer script:
 * skipped with a message where kubectl is missing, a failure under {@code CI=true}.
 */
final class Kustomize {

	static final Path POST_RENDERER = ProjectFiles.path("deploy/helm-post-renderer/tokengap-post-renderer");

	private Kustomize() {
	}

	/** What a command printed and how it exited. */
	record Result(int exit, String stdout, String stderr) {

		String successfully() {
			assertThat(this.exit).as("exit status; stderr: %s", this.stderr).isZero();
			return this.stdout;
		}

	}

	/** {@code kubectl kustomize DIR}: the built manifests. */
	static String build(Path dir) {
		return tryBuild(dir).successfully();
	}

	/** {@code kubectl kustomize DIR}, whether it succeeds or fails. */
	static Result tryBuild(Path dir) {
		return run(null, Map.of(), kubectl().getPath(), "kustomize", dir.toString());
	}

	/**
	 * The post-renderer as Helm runs it: rendered manifests on stdin, {@code args} after
	 * it.
	 */
	static Result postRender(String rendered, Map<String, String> env, String... args) {
		List<String> command = new ArrayList<>(List.of(POST_RENDERER.toString()));
		command.addAll(List.of(args));
		Map<String, String> withKubectl = new HashMap<>(env);
		withKubectl.put("KUBECTL", kubectl().getPath());
		return run(rendered, withKubectl, command.toArray(String[]::new));
	}

	private static volatile File checked;

	/**
	 * kubectl on PATH, once checked to bundle Kustomize v5 (Components, regex targets).
	 */
	static File kubectl() {
		File kubectl = checked;
		if (kubectl == null) {
			kubectl = find();
			String version = run(null, Map.of(), kubectl.getPath(), "version", "--client").successfully();
			assertThat(version).as("kubectl version --client").containsPattern("Kustomize Version: v5\\.");
			checked = kubectl;
		}
		return kubectl;
	}

	private static File find() {
		return Executables.onPath("kubectl", "kubectl (with Kustomize v5) is not on PATH; .ci/run must install it",
				"kubectl not found on PATH: skipping the Kustomize tests");
	}

	private static Result run(String stdin, Map<String, String> env, String... command) {
		try {
			ProcessBuilder builder = new ProcessBuilder(command).directory(ProjectFiles.root().toFile());
			builder.environment().putAll(env);
			Process process = builder.start();
			CompletableFuture<String> stdout = CompletableFuture.supplyAsync(() -> read(process.getInputStream()));
			CompletableFuture<String> stderr = CompletableFuture.supplyAsync(() -> read(process.getErrorStream()));
			try (OutputStream in = process.getOutputStream()) {
				if (stdin != null) {
					in.write(stdin.getBytes(StandardCharsets.UTF_8));
				}
			}
			assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("%s finished", command[0]).isTrue();
			return new Result(process.exitValue(), stdout.join(), stderr.join());
		}
		catch (IOException ex) {
			throw new AssertionError("could not run " + List.of(command), ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new AssertionError(ex);
		}
	}

	private static String read(InputStream stream) {
		try {
			return new String(stream.readAllBytes(), StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
