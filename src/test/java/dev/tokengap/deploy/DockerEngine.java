package dev.tokengap.deploy;

import org.junit.jupiter.api.Assumptions;
import org.testcontainers.DockerClientFactory;

/**
 * Whether the container tests can run: skipped with a message when no Docker engine answers, a
 * failure under {@code CI=true} (.ci/run starts the engine and builds the base images).
 */
final class DockerEngine {

	private DockerEngine() {
	}

	static void require() {
		boolean available;
		try {
			available = DockerClientFactory.instance().isDockerAvailable();
		}
		catch (RuntimeException ex) {
			available = false;
		}
		if (available) {
			return;
		}
		String message = "No Docker engine reachable: docker/ensure-docker-engine.sh starts one and "
				+ "docker/build-offline-images.sh builds the base images where no registry is reachable";
		if ("true".equalsIgnoreCase(System.getenv("CI"))) {
			throw new AssertionError("CI=true and the container tests cannot run. " + message);
		}
		Assumptions.abort(message + ". Skipping the container tests.");
	}

}
