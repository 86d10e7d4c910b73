package dev.tokengap.testsupport;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs Debian's {@code promtool}: skipped with a message where it is missing, a failure
 * under {@code CI=true} (.ci/run installs it). The one place tests find it.
 */
public final class Promtool {

	private Promtool() {
	}

	/**
	 * How promtool ended.
	 *
	 * @param exit its exit status
	 * @param output what it wrote, standard error included
	 */
	public record Result(int exit, String output) {
	}

	/**
	 * Runs promtool in the project's root.
	 * @param args its arguments, such as {@code check rules <file>}
	 * @return how it ended
	 */
	public static Result run(String... args) {
		return runWithInput(null, args);
	}

	/**
	 * Runs promtool in the project's root with text on its standard input, as
	 * {@code promtool check metrics} reads a scrape.
	 * @param input the text to write to its standard input, or null for none
	 * @param args its arguments
	 * @return how it ended
	 */
	public static Result runWithInput(String input, String... args) {
		List<String> command = new ArrayList<>();
		command.add(executable().getPath());
		command.addAll(List.of(args));
		try {
			Process process = new ProcessBuilder(command).directory(ProjectFiles.root().toFile())
				.redirectErrorStream(true)
				.start();
			if (input != null) {
				process.getOutputStream().write(input.getBytes(StandardCharsets.UTF_8));
			}
			process.getOutputStream().close();
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

	/**
	 * Finds promtool on the {@code PATH}.
	 * @return the executable
	 */
	public static File executable() {
		return Executables.onPath("promtool",
				"promtool is not installed; .ci/run installs Debian's 'prometheus' package",
				"promtool not found on PATH (apt-get install prometheus): skipping");
	}

}
