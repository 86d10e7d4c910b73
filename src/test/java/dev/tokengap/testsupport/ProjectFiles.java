package dev.tokengap.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The repository's own files (chart, rules, dashboards, README, the metrics contract),
 * found from the Maven base directory whatever the working directory of the test JVM.
 */
public final class ProjectFiles {

	private static final Path ROOT = findRoot();

	private ProjectFiles() {
	}

	public static Path root() {
		return ROOT;
	}

	public static Path path(String relative) {
		return ROOT.resolve(relative);
	}

	public static String read(String relative) {
		return read(path(relative));
	}

	public static String read(Path file) {
		try {
			return Files.readString(file, StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private static Path findRoot() {
		String basedir = System.getProperty("basedir");
		Path dir = Path.of((basedir != null) ? basedir : System.getProperty("user.dir")).toAbsolutePath();
		for (Path candidate = dir; candidate != null; candidate = candidate.getParent()) {
			if (Files.isRegularFile(candidate.resolve("pom.xml")) && Files.isDirectory(candidate.resolve("helm"))) {
				return candidate;
			}
		}
		throw new IllegalStateException("no project root (pom.xml and helm/) above " + dir);
	}

}
