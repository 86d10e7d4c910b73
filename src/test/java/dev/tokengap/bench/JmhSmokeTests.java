package dev.tokengap.bench;

import java.util.Collection;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import org.openjdk.jmh.runner.options.VerboseMode;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Keeps the JMH benchmarks compiling and running in {@code ./mvnw verify}: each one, in
 * this JVM (no fork), for one warm-up and one measured iteration of 200 ms. The figures
 * of such a short run mean nothing; docs/performance.md has the real ones and how to get
 * them.
 */
class JmhSmokeTests {

	private static final List<String> BENCHMARKS = List.of("SseScannerBenchmark.scanChatChunk",
			"SseScannerBenchmark.scanResponsesDelta", "SseScannerBenchmark.scanChatChunkInRanges",
			"SseScannerBenchmark.scanByteBufAsTheRelayDoes", "RecordPathBenchmark.recordOneContentEvent",
			"ExpositionParserBenchmark.parseEverySample", "ExpositionParserBenchmark.readEngineSample",
			"RequestFactsBenchmark.scan", "RequestFactsBenchmark.jacksonAsBefore", "HopByHopHeadersBenchmark.copy",
			"HopByHopHeadersBenchmark.lowerCasedSet");

	@Test
	void everyBenchmarkRunsOneShortIteration() throws RunnerException {
		Options options = new OptionsBuilder().include("dev\\.tokengap\\.(bench|proxy)\\..*Benchmark\\.")
			.forks(0)
			// the request scanner's smallest body: the long ones are for real runs
			.param("promptBytes", "200")
			.warmupIterations(1)
			.warmupTime(TimeValue.milliseconds(200))
			.measurementIterations(1)
			.measurementTime(TimeValue.milliseconds(200))
			.addProfiler(GCProfiler.class)
			.shouldFailOnError(true)
			.verbosity(VerboseMode.SILENT)
			.build();
		Collection<RunResult> results = new Runner(options).run();
		assertThat(results).extracting((r) -> shortName(r.getParams().getBenchmark())).containsAll(BENCHMARKS);
		for (RunResult run : results) {
			Result<?> primary = run.getPrimaryResult();
			Result<?> alloc = run.getSecondaryResults().get("gc.alloc.rate.norm");
			System.out.printf("jmh smoke: %-50s %s %10.1f ns/op %8.1f B/op%n",
					shortName(run.getParams().getBenchmark()),
					run.getParams().getParam("observer") == null ? "" : run.getParams().getParam("observer"),
					primary.getScore(), (alloc != null) ? alloc.getScore() : Double.NaN);
			assertThat(primary.getScore()).isPositive().isFinite();
		}
	}

	private static String shortName(String benchmark) {
		String[] parts = benchmark.split("\\.");
		return parts[parts.length - 2] + "." + parts[parts.length - 1];
	}

}
