package dev.tokengap.deploy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import com.github.dockerjava.api.command.CreateContainerCmd;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.Network;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.images.builder.ImageFromDockerfile;

import dev.tokengap.testsupport.ProjectFiles;

/**
 * The tokengap image, built once per test JVM from {@code docker/Dockerfile} and the jar
 * Maven packaged, and containers of it the way Kubernetes runs them (read-only root, /tmp
 * writable).
 */
final class TokengapImage {

	static final String NAME = "tokengap:it";

	static final String MODEL = "sim-llama-3-8b";

	private static String built;

	private TokengapImage() {
	}

	static synchronized String get() {
		if (built == null) {
			built = build();
		}
		return built;
	}

	/** A simulator container, reachable as {@code alias:8000} on the network. */
	static GenericContainer<?> simulator(Network network, String alias, String... extraArgs) {
		String[] command = new String[extraArgs.length + 1];
		command[0] = "--tokengap.mode=simulator";
		System.arraycopy(extraArgs, 0, command, 1, extraArgs.length);
		return simulatorWithCommand(network, alias, command);
	}

	/** A simulator container started with exactly these arguments. */
	static GenericContainer<?> simulatorWithCommand(Network network, String alias, String... command) {
		return hardened(new GenericContainer<>(get())).withNetwork(network)
			.withNetworkAliases(alias)
			.withCommand(command)
			.withExposedPorts(8000)
			.waitingFor(Wait.forHttp("/health").forPort(8000).withStartupTimeout(Duration.ofMinutes(2)));
	}

	/**
	 * A tokengap container proxying to {@code upstream}, ready when its readiness probe
	 * answers.
	 */
	static GenericContainer<?> proxy(Network network, String alias, String upstream) {
		return proxyWithCommand(network, alias, "--tokengap.upstream.url=" + upstream);
	}

	/** A tokengap container started with exactly these arguments. */
	static GenericContainer<?> proxyWithCommand(Network network, String alias, String... command) {
		return hardened(new GenericContainer<>(get())).withNetwork(network)
			.withNetworkAliases(alias)
			.withCommand(command)
			.withExposedPorts(8080, 8081)
			.waitingFor(
					Wait.forHttp("/actuator/health/readiness").forPort(8081).withStartupTimeout(Duration.ofMinutes(2)));
	}

	/**
	 * As the chart runs it: read-only root filesystem, a writable /tmp (the emptyDir).
	 */
	private static GenericContainer<?> hardened(GenericContainer<?> container) {
		Consumer<CreateContainerCmd> readOnlyRoot = (cmd) -> cmd.getHostConfig().withReadonlyRootfs(true);
		return container.withTmpFs(java.util.Map.of("/tmp", "rw,exec,size=64m"))
			.withCreateContainerCmdModifier(readOnlyRoot);
	}

	private static String build() {
		Path jar = Path.of(System.getProperty("tokengap.jar", "target/tokengap-0.1.0-SNAPSHOT.jar"));
		if (!Files.isRegularFile(jar)) {
			throw new AssertionError("No packaged jar at " + jar + ": the container tests run in the failsafe "
					+ "phase of ./mvnw verify, after package");
		}
		long start = System.nanoTime();
		try {
			String image = new ImageFromDockerfile(NAME, false)
				.withFileFromPath("Dockerfile", ProjectFiles.path("docker/Dockerfile"))
				.withFileFromPath("target/" + jar.getFileName(), jar)
				.get(10, TimeUnit.MINUTES);
			System.out.printf("tokengap image %s built from docker/Dockerfile in %d ms%n", image,
					TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
			return image;
		}
		catch (Exception ex) {
			throw new AssertionError("docker build of docker/Dockerfile failed. Without a registry, "
					+ "docker/build-offline-images.sh must have built eclipse-temurin:25-jre first", ex);
		}
	}

}
