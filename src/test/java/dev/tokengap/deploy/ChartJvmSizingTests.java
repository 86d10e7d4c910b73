package dev.tokengap.deploy;

import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import dev.tokengap.testsupport.ProjectFiles;

import static dev.tokengap.deploy.ChartTests.container;
import static dev.tokengap.deploy.ChartTests.env;
import static dev.tokengap.deploy.ChartTests.map;
import static dev.tokengap.deploy.ChartTests.render;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The JVM is sized for its pod, not its node: processors and Reactor Netty's event loops
 * from the CPU request, and a heap that leaves room, inside the memory limit, for what
 * the JVM uses beside it. The image's defaults are the chart's.
 */
class ChartJvmSizingTests {

	/**
	 * What tokengap's JVM holds beside the heap at 1,000 streams (metaspace, code cache,
	 * GC structures, threads, Netty's direct buffers, malloc): peak RSS minus committed
	 * heap, measured as docs/performance.md "Sizing the pod" describes (403 - 206 MiB
	 * with the heap pinned at its cap; 175 to 190 MiB with a free heap), rounded up.
	 */
	static final long MEASURED_NON_HEAP_MIB = 200;

	/**
	 * The same without Netty's direct buffers (the JVM's own native memory tracking:
	 * about 150 MiB).
	 */
	static final long MEASURED_NATIVE_WITHOUT_DIRECT_MIB = 155;

	@Test
	void processorsFollowTheCpuRequestRoundedUpAndNeverBelowTwo() {
		Map<String, Integer> expected = Map.of("250m", 2, "2000m", 2, "2500m", 3, "4", 4, "1.5", 2, "3.2", 4, "16", 16);
		expected
			.forEach((request, processors) -> assertThat(javaToolOptions("tokengap.resources.requests.cpu=" + request))
				.as("cpu request %s", request)
				.startsWith("-XX:ActiveProcessorCount=" + processors + " -Dreactor.netty.ioWorkerCount=" + processors
						+ " "));
		assertThat(javaToolOptions()).as("the default request, 250m").startsWith("-XX:ActiveProcessorCount=2 ");
		assertThat(javaToolOptions("tokengap.resources.requests=null")).as("no request")
			.startsWith("-XX:ActiveProcessorCount=2 -Dreactor.netty.ioWorkerCount=2 ");
	}

	@Test
	void processorsAndEventLoopsCanBeSetAndJavaToolOptionsComeAfterThem() {
		assertThat(javaToolOptions("tokengap.jvm.activeProcessorCount=6", "tokengap.jvm.ioWorkerCount=3",
				"tokengap.javaToolOptions=-XX:+UseZGC -Dreactor.netty.ioWorkerCount=8"))
			.as("a flag in javaToolOptions comes last, so it wins")
			.isEqualTo(
					"-XX:ActiveProcessorCount=6 -Dreactor.netty.ioWorkerCount=3 -XX:+UseZGC -Dreactor.netty.ioWorkerCount=8");
		assertThat(javaToolOptions("tokengap.jvm.activeProcessorCount=1")).as("an explicit count is not floored")
			.startsWith("-XX:ActiveProcessorCount=1 -Dreactor.netty.ioWorkerCount=1 ");
	}

	@Test
	void aCpuRequestTheChartCannotReadIsRefused() {
		assertThatThrownBy(() -> render("tokengap.resources.requests.cpu=1k"))
			.hasMessageContaining("tokengap.resources.requests.cpu must be cores (2, 1.5) or millicores (500m)");
		assertThatThrownBy(() -> render("tokengap.jvm.activeProcessorCount=two"))
			.hasMessageContaining("at '/tokengap/jvm/activeProcessorCount'");
	}

	/**
	 * The OOM kill to avoid: a heap that may grow to its maximum plus what the JVM
	 * measurably holds beside it must fit the memory limit, and so must the heap plus
	 * every direct buffer Netty may allocate plus the JVM's other native memory. (The
	 * heap used to be 75 % of a 384 Mi limit.)
	 */
	@Test
	void theHeapAndWhatTheJvmHoldsBesideItFitTheMemoryLimit() {
		Map<String, Object> resources = map(container(render().podSpec(), "tokengap"), "resources");
		String limit = (String) map(resources, "limits").get("memory");
		assertThat(map(resources, "requests")).as("request = limit: the pod is not evicted first under pressure")
			.containsEntry("memory", limit);
		long limitMib = mebibytes(limit);
		String options = javaToolOptions();
		long heapMib = limitMib * Long.parseLong(flag(options, "-XX:MaxRAMPercentage=(\\d+)")) / 100;
		long directMib = Long.parseLong(flag(options, "-XX:MaxDirectMemorySize=(\\d+)m"));
		assertThat(heapMib + MEASURED_NON_HEAP_MIB)
			.as("heap %d MiB + measured non-heap, limit %d MiB", heapMib, limitMib)
			.isLessThanOrEqualTo(limitMib * 85 / 100);
		assertThat(heapMib + directMib + MEASURED_NATIVE_WITHOUT_DIRECT_MIB).isLessThanOrEqualTo(limitMib);
		assertThat(options).contains("-XX:+UseG1GC", "-XX:+ExitOnOutOfMemoryError");
	}

	/**
	 * The heap starts at its cap and G1 never gives it back: left to itself, G1 shrinks
	 * the heap to about 50 MiB at the concurrent cycle class loading starts during
	 * start-up, and grows it again only as far as its GC-time goal asks, so at 1,000
	 * streams it collected every 15 s, with mixed collections, instead of every 20-40 s.
	 * {@code ImageContainerTests} checks the committed heap of the real image.
	 */
	@Test
	void theHeapStartsAtItsCapAndIsNeverGivenBack() {
		String options = javaToolOptions();
		assertThat(flag(options, "-XX:InitialRAMPercentage=(\\d+)"))
			.isEqualTo(flag(options, "-XX:MaxRAMPercentage=(\\d+)"));
		assertThat(options).contains("-XX:MaxHeapFreeRatio=100");
	}

	@Test
	void theImageDefaultsAreTheChartDefaults() {
		Matcher env = Pattern.compile("ENV JAVA_TOOL_OPTIONS=\"([^\"]*)\"")
			.matcher(ProjectFiles.read("docker/Dockerfile"));
		assertThat(env.find()).as("docker/Dockerfile sets JAVA_TOOL_OPTIONS").isTrue();
		assertThat(env.group(1)).isEqualTo(javaToolOptions());
	}

	private static String javaToolOptions(String... values) {
		return env(container(render(values).podSpec(), "tokengap")).get("JAVA_TOOL_OPTIONS");
	}

	private static String flag(String options, String regex) {
		Matcher matcher = Pattern.compile(regex).matcher(options);
		assertThat(matcher.find()).as("%s in %s", regex, options).isTrue();
		return matcher.group(1);
	}

	private static long mebibytes(String quantity) {
		if (quantity.endsWith("Gi")) {
			return Long.parseLong(quantity.replace("Gi", "")) * 1024;
		}
		assertThat(quantity).endsWith("Mi");
		return Long.parseLong(quantity.replace("Mi", ""));
	}

}
