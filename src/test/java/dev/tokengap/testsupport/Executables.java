package dev.tokengap.testsupport;

import java.io.File;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Finds the external tools tests run ({@code promtool}, {@code kubectl}): a failure under
 * {@code CI=true}, where .ci/run installs them, and elsewhere a skip with a message.
 */
public final class Executables {

	private Executables() {
	}

	/**
	 * Finds an executable on the {@code PATH}.
	 * @param name the executable's name
	 * @param missingOnCi the failure's message under {@code CI=true}
	 * @param skipping the skip's message elsewhere
	 * @return the executable
	 */
	public static File onPath(String name, String missingOnCi, String skipping) {
		for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin").split(File.pathSeparator)) {
			File candidate = new File(dir, name);
			if (candidate.canExecute()) {
				return candidate;
			}
		}
		if ("true".equalsIgnoreCase(System.getenv("CI"))) {
			throw new AssertionError(missingOnCi);
		}
		assumeTrue(false, skipping);
		return null;
	}

}
