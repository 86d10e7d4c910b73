package dev.tokengap.deploy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import com.github.dockerjava.api.command.InspectImageResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.TestMethodOrder;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.Network;
import org.testcontainers.containers.output.ToStringConsumer;
import org.testcontainers.containers.startupcheck.OneShotStartupCheckStrategy;
import org.yaml.snakeyaml.Yaml;

import dev.tokengap.testsupport.MetricsContract;
import dev.tokengap.testsupport.ProjectFiles;
import dev.tokengap.testsupport.PrometheusText;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The image of {@code docker/Dockerfile} runs as Kubernetes runs it (read-only root, /tmp
 * writable): once as the vLLM simulator, once as tokengap in front of it on one Docker
 * network, each with its command from the compose demo ({@code docker/compose.yaml});
 * tokengap starts from the AOT cache trained in the image (it runs with
 * {@code -XX:AOTMode=on}), a chat completion streams through, the management port serves
 * the contract's series, and a stop drains in-flight streams for the drain time the chart
 * sets.
 */
@ExtendWith(DockerEngine.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ImageContainerTests {

	/** What the chart would set with drainTimeout=6. */
	static final String DRAIN = "6s";

	/**
	 * The launcher's options for tokengap's container, beside the image's
	 * JAVA_TOOL_OPTIONS: with {@code -XX:AOTMode=on} the JVM refuses to start when it
	 * cannot use the AOT cache the entrypoint names (a mismatch would otherwise only slow
	 * startup down, silently), and {@code -Xlog:aot} says why. An entrypoint without
	 * {@code -XX:AOTCache} would still start (on the JDK's own archive):
	 * {@link #tokengapStartsFromTheImagesAotCache} reads the log for the cache.
	 */
	static final String AOT_REQUIRED = "-XX:AOTMode=on -Xlog:aot";

	/** The chart's memory limit for tokengap, 512Mi. */
	static final long MEMORY_LIMIT_BYTES = 512L << 20;

	static Network network;

	static GenericContainer<?> simulator;

	static GenericContainer<?> tokengap;

	@BeforeAll
	static void start() {
		TokengapImage.get();
		network = Network.newNetwork();
		simulator = TokengapImage.simulatorWithCommand(network, "simulator", composeCommand("simulator"));
		long start = System.nanoTime();
		simulator.start();
		long simulatorReady = System.nanoTime() - start;
		ToStringConsumer tokengapLogs = new ToStringConsumer();
		tokengap = TokengapImage.proxyWithCommand(network, "tokengap", composeCommand("tokengap"))
			.withEnv("SPRING_LIFECYCLE_TIMEOUTPERSHUTDOWNPHASE", DRAIN)
			.withEnv("JDK_JAVA_OPTIONS", AOT_REQUIRED)
			.withCreateContainerCmdModifier((cmd) -> cmd.getHostConfig().withMemory(MEMORY_LIMIT_BYTES))
			.withLogConsumer(tokengapLogs);
		start = System.nanoTime();
		try {
			tokengap.start();
		}
		catch (RuntimeException ex) {
			throw new AssertionError("tokengap's container did not start. It runs with JDK_JAVA_OPTIONS=" + AOT_REQUIRED
					+ ": the JVM refuses to start when the AOT cache of docker/Dockerfile (/app/tokengap.aot) cannot "
					+ "be used (look for 'Unable to use AOT cache' below). Its output:\n" + tokengapLogs.toUtf8String(),
					ex);
		}
		long tokengapReady = System.nanoTime() - start;
		System.out.printf(
				"startup-to-ready: simulator container %d ms (/health), tokengap container %d ms "
						+ "(/actuator/health/readiness); %s%n",
				TimeUnit.NANOSECONDS.toMillis(simulatorReady), TimeUnit.NANOSECONDS.toMillis(tokengapReady),
				springStartedLine(tokengap.getLogs()));
	}

	@AfterAll
	static void stop() {
		if (tokengap != null) {
			tokengap.stop();
		}
		if (simulator != null) {
			simulator.stop();
		}
		if (network != null) {
			network.close();
		}
	}

	/**
	 * A misspelt upstream variable must not serve the simulator's fake completions to
	 * real clients.
	 */
	@Test
	@Order(0)
	void refusesToStartWithoutAnEngineUrlInsteadOfFallingIntoDemoMode() {
		ToStringConsumer logs = new ToStringConsumer();
		try (GenericContainer<?> unconfigured = new GenericContainer<>(TokengapImage.get())
			.withEnv("TOKENGAP_UPSTREM_URL", "http://vllm:8000")
			.withLogConsumer(logs)
			.withStartupCheckStrategy(new OneShotStartupCheckStrategy().withTimeout(Duration.ofMinutes(2)))) {
			assertThatThrownBy(unconfigured::start).as("the container exits with a failure").isNotNull();
		}
		assertThat(logs.toUtf8String()).contains("tokengap.upstream.url")
			.contains("TOKENGAP_UPSTREAM_URL")
			.contains("--tokengap.mode=demo")
			.doesNotContain("Started TokengapApplication");
	}

	@Test
	@Order(1)
	void imageRunsAsNonRootWithTheDocumentedPortsAndContainerAwareJvm() throws Exception {
		InspectImageResponse image = DockerClientFactory.instance().client().inspectImageCmd(TokengapImage.NAME).exec();
		assertThat(image.getConfig().getUser()).isEqualTo("10001:10001");
		assertThat(image.getConfig().getExposedPorts()).extracting(Object::toString)
			.containsExactlyInAnyOrder("8080/tcp", "8081/tcp", "8000/tcp");
		assertThat(tokengap.execInContainer("id", "-u").getStdout().strip()).isEqualTo("10001");
		assertThat(tokengap.getLogs()).contains(
				"Picked up JAVA_TOOL_OPTIONS: -XX:ActiveProcessorCount=2 -Dreactor.netty.ioWorkerCount=2 -XX:+UseG1GC "
						+ "-XX:InitialRAMPercentage=40 -XX:MaxRAMPercentage=40 -XX:MaxHeapFreeRatio=100 "
						+ "-XX:MaxDirectMemorySize=64m -XX:+ExitOnOutOfMemoryError")
			.doesNotContain("Restricted methods will be blocked");
		assertThat(tokengap.execInContainer("touch", "/app/x").getExitCode()).as("read-only root").isNotZero();
		assertThat(tokengap.execInContainer("touch", "/tmp/x").getExitCode()).as("writable /tmp").isZero();
	}

	/**
	 * In a container limited to the chart's 512Mi, the heap is 40 % of the limit from the
	 * start and stays so through start-up and traffic: G1 left to itself started it at 8
	 * MiB (1/64 of the limit), shrank it at start-up's concurrent cycle and grew it only
	 * as far as its GC-time goal asked, collecting twice as often at 1,000 streams.
	 */
	@Test
	@Order(1)
	void theHeapIsFortyPercentOfTheMemoryLimitFromTheStartAndStaysSo() throws IOException {
		long cap = MEMORY_LIMIT_BYTES * 40 / 100;
		assertThat(committedHeapBytes()).as("committed heap once ready").isBetween(cap * 95 / 100, cap * 105 / 100);
		for (int i = 0; i < 4; i++) {
			SseRequests.chat(proxyUrl(), 32, "Hello");
		}
		assertThat(committedHeapBytes()).as("committed heap after streams").isBetween(cap * 95 / 100, cap * 105 / 100);
	}

	private static long committedHeapBytes() {
		return (long) PrometheusText.scrape(managementUrl())
			.matching("jvm_memory_committed_bytes", "area", "heap")
			.stream()
			.mapToDouble(PrometheusText.Sample::value)
			.sum();
	}

	/**
	 * The AOT cache trained at image build time applies: the JVM ran with AOTMode=on and
	 * used it.
	 */
	@Test
	@Order(1)
	void tokengapStartsFromTheImagesAotCache() {
		InspectImageResponse image = DockerClientFactory.instance().client().inspectImageCmd(TokengapImage.NAME).exec();
		assertThat(image.getConfig().getEntrypoint()).contains("-XX:AOTCache=/app/tokengap.aot");
		assertThat(tokengap.getLogs()).contains("NOTE: Picked up JDK_JAVA_OPTIONS: " + AOT_REQUIRED)
			.contains("[aot] Opened AOT cache /app/tokengap.aot.")
			.contains("[aot] Using AOT-linked classes: true")
			.doesNotContain("Unable to use AOT cache");
	}

	/**
	 * The entrypoint lowers the JIT compiler threads' priority so that the main thread
	 * starts the context first: as UID 10001 the JVM may lower its own threads' priority,
	 * and does (nice 10), while the main thread (the launcher's threads are named "java")
	 * and the event loops keep nice 0.
	 */
	@Test
	@Order(1)
	void theJitCompilerThreadsRunAtNiceTenAndEverythingElseAtZero() throws Exception {
		InspectImageResponse image = DockerClientFactory.instance().client().inspectImageCmd(TokengapImage.NAME).exec();
		assertThat(image.getConfig().getEntrypoint()).contains("-XX:ThreadPriorityPolicy=1",
				"-XX:CompilerThreadPriority=10");
		// comm, then the nice value: field 19 of stat, the 17th after the ") " that ends
		// the (possibly spaced) comm field
		String threads = tokengap
			.execInContainer("sh", "-c",
					"for t in /proc/1/task/*; do echo \"$(cat $t/comm)|$(sed 's/^.*) //' $t/stat | cut -d' ' -f17)\";"
							+ " done")
			.getStdout();
		Map<String, List<String>> niceByKind = threads.lines()
			.filter((line) -> line.contains("|"))
			.collect(Collectors.groupingBy((line) -> threadKind(line.substring(0, line.indexOf('|'))),
					Collectors.mapping((line) -> line.substring(line.indexOf('|') + 1).strip(), Collectors.toList())));
		assertThat(niceByKind.get("C1")).as(threads).isNotEmpty().containsOnly("10");
		assertThat(niceByKind.get("C2")).as(threads).isNotEmpty().containsOnly("10");
		assertThat(niceByKind.get("main")).as(threads).isNotEmpty().containsOnly("0");
		assertThat(niceByKind.get("event loop")).as(threads).isNotEmpty().containsOnly("0");
	}

	private static String threadKind(String comm) {
		if (comm.startsWith("C1 CompilerThre")) {
			return "C1";
		}
		if (comm.startsWith("C2 CompilerThre")) {
			return "C2";
		}
		if (comm.equals("java")) {
			return "main";
		}
		return (comm.startsWith("reactor-http-") || comm.startsWith("tokengap-epoll")) ? "event loop" : "other";
	}

	@Test
	@Order(2)
	void streamsAChatCompletionThroughTokengapInFrontOfTheSimulator() throws IOException {
		List<String> events = SseRequests.chat(proxyUrl(), 16, "Hello");
		assertThat(events).hasSizeGreaterThanOrEqualTo(17);
		assertThat(events.get(0)).contains("\"role\":\"assistant\"");
		assertThat(events.get(events.size() - 1)).isEqualTo("data: [DONE]");
	}

	@Test
	@Order(3)
	void managementPortServesTheContractSeries() throws IOException {
		// An engine stall of 600 ms before token 8: a spike,
		// so the spike series exists too.
		SseRequests.chat(proxyUrl(), 16, "Hello", "X-Sim-Engine-Stall", "8:600");
		String scrape = awaitScrapeContaining("# TYPE tokengap_gap_spike_seconds histogram");
		String labels = "model_name=\"" + TokengapImage.MODEL + "\"";
		MetricsContract contract = MetricsContract.load();
		int checked = 0;
		for (Map.Entry<String, String> series : contract.types().entrySet()) {
			if (series.getKey().equals("tokengap_backend_requests_swapped")) {
				// The contract: V0 engines only, absent otherwise; the simulator is a V1
				// engine.
				assertThat(scrape).doesNotContain("# TYPE tokengap_backend_requests_swapped");
				continue;
			}
			assertThat(scrape).as("scrape has # TYPE %s", series.getKey())
				.containsPattern("(?m)^# TYPE " + series.getKey() + " " + series.getValue() + "$");
			checked++;
		}
		assertThat(checked).isGreaterThanOrEqualTo(14);
		assertThat(scrape).containsPattern("tokengap_streams_total\\{[^}]*outcome=\"completed\"[^}]*\\} [1-9]")
			.contains(labels);
		assertThat(scrape).contains("tokengap_inter_token_latency_seconds_bucket{").contains("le=\"2560.0\"");
	}

	private static String awaitScrapeContaining(String text) {
		String[] scrape = new String[1];
		org.awaitility.Awaitility.await()
			.atMost(Duration.ofSeconds(15))
			.pollInterval(Duration.ofMillis(200))
			.until(() -> (scrape[0] = PrometheusText.scrape(managementUrl()).text()).contains(text));
		return scrape[0];
	}

	@Test
	@Order(4)
	void stopDrainsInFlightStreamsForTheDrainTimeAndCutsLongerOnes() throws Exception {
		// ~20 ms per simulated token: the short stream ends within the drain,
		// the long one cannot.
		CompletableFuture<List<String>> shortStream = CompletableFuture.supplyAsync(() -> chat(60));
		CompletableFuture<List<String>> longStream = CompletableFuture.supplyAsync(() -> chat(3000));
		waitForInflightStreams(2);
		long start = System.nanoTime();
		DockerClientFactory.instance().client().stopContainerCmd(tokengap.getContainerId()).withTimeout(30).exec();
		long stopped = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
		assertThat(shortStream.get(60, TimeUnit.SECONDS)).last().isEqualTo("data: [DONE]");
		assertThat(longStream.handle((events, failure) -> (failure != null) ? List.of("<cut>") : events)
			.get(60, TimeUnit.SECONDS)).as("the stream still running after the drain is cut")
			.doesNotContain("data: [DONE]");
		System.out.printf("docker stop with two streams in flight took %d ms (drain %s)%n", stopped, DRAIN);
		assertThat(stopped).isLessThan(Duration.ofSeconds(25).toMillis());
	}

	@SuppressWarnings("unchecked")
	private static String[] composeCommand(String service) {
		Map<String, Object> compose = new Yaml().load(ProjectFiles.read("docker/compose.yaml"));
		Map<String, Object> definition = ((Map<String, Map<String, Object>>) compose.get("services")).get(service);
		return ((List<String>) definition.get("command")).toArray(String[]::new);
	}

	private static void waitForInflightStreams(int count) throws Exception {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
		Pattern inflight = Pattern.compile("(?m)^tokengap_inflight_streams\\{[^}]*\\} (\\d+)");
		while (System.nanoTime() < deadline) {
			Matcher matcher = inflight.matcher(PrometheusText.scrape(managementUrl()).text());
			int total = 0;
			while (matcher.find()) {
				total += Integer.parseInt(matcher.group(1));
			}
			if (total >= count) {
				return;
			}
			Thread.sleep(50);
		}
		throw new AssertionError("the streams did not start within 30 s");
	}

	private static List<String> chat(int maxTokens) {
		try {
			return SseRequests.chat(proxyUrl(), maxTokens, "Drain");
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private static String springStartedLine(String logs) {
		Matcher started = Pattern
			.compile("Started TokengapApplication in [0-9.]+ seconds \\(process running for [0-9.]+\\)")
			.matcher(logs);
		return started.find() ? "Spring: " + started.group() : "no Spring start line";
	}

	static String proxyUrl() {
		return "http://" + tokengap.getHost() + ":" + tokengap.getMappedPort(8080);
	}

	static String managementUrl() {
		return "http://" + tokengap.getHost() + ":" + tokengap.getMappedPort(8081);
	}

}
