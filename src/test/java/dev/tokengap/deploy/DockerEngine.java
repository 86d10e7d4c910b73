package dev.tokengap.deploy;

import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.testcontainers.DockerClientFactory;

/**
 * Whether the container tests can run: skipped, with a message, when no Docker engine
 * answers; a failure under {@code CI=true} (.ci/run starts the engine and builds the base
 * images). Use it as {@code @ExtendWith(DockerEngine.class)} on a container test class.
 */
final class DockerEngine implements ExecutionCondition {

	static final String MISSING = "No Docker engine reachable: docker/ensure-docker-engine.sh starts one, and "
			+ "docker/build-offline-images.sh builds the base images where no registry is reachable";

	@Override
	public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
		if (available()) {
			return ConditionEvaluationResult.enabled("a Docker engine answers");
		}
		if ("true".equalsIgnoreCase(System.getenv("CI"))) {
			throw new AssertionError("CI=true and the container tests cannot run. " + MISSING);
		}
		String reason = MISSING + ". Skipping " + context.getDisplayName() + ".";
		System.out.println("SKIPPED: " + reason);
		return ConditionEvaluationResult.disabled(reason);
	}

	private static boolean available() {
		try {
			return DockerClientFactory.instance().isDockerAvailable();
		}
		catch (RuntimeException ex) {
			return false;
		}
	}

}
