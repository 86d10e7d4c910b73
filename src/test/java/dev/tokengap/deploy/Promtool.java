package dev.tokengap.deploy;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.tokengap.testsupport.ProjectFiles;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Runs Debian's {@code promtool}: skipped with a message where it is missing, a failure under
 * {@code CI=true} (.ci/run installs it).
 */
final class Promtool {

	private Promtool() {
	}

	record Result(int exit, String output) {
	}

	static Result run(String... args) {
		List<String> command = new ArrayList<>();
		command.add(executable().getPath());
		command.addAll(List.of(args));
		try {
			Process process = new ProcessBuilder(command).directory(ProjectFiles.root().toFile())
				.redirectErrorStream(true)
				.start();
			String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
			assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("promtool finished").isTrue();
			return new Result(process.exitValue(), output);
		}
		catch (IOException ex) {
			throw new AssertionError("could not run promtool", ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new AssertionError(ex);
		}
	}

	static File executable() {
		for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin").split(File.pathSeparator)) {
			File candidate = new File(dir, "promtool");
			if (candidate.canExecute()) {
				return candidate;
			}
		}
		if ("true".equalsIgnoreCase(System.getenv("CI"))) {
			throw new AssertionError("promtool is not installed; .ci/run installs Debian's 'prometheus' package");
		}
		assumeTrue(false, "promtool not found on PATH (apt-get install prometheus): skipping");
		return null;
	}

}
