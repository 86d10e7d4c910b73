package dev.tokengap.bench;

import java.awt.image.BufferedImage;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.imageio.ImageIO;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;

import dev.tokengap.sim.SimulatorServer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * {@code tokengap bench} as a release tool, over real HTTP against tokengap in front of
 * its in-process simulator (the same context as {@link BenchIntegrationTests}): warm-up
 * kept out of the figures and out of the engine's window, the stream shape of an engine
 * that stalls mid-stream (the simulator's {@code X-Sim-Engine-Stall}), reasoning, the
 * run's record, compare's verdicts and a sweep's files.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = { "management.server.port=0",
		"tokengap.mode=demo", "tokengap.demo.load=false", "tokengap.sim.step-fixed-cost=5ms" })
class BenchReleaseIntegrationTests {

	private static final int OUTPUT = 30;

	/** Token 15 of 30: its gap ends the 16th content event, in the middle third. */
	private static final String STALL_MID_STREAM = "X-Sim-Engine-Stall=15:500";

	@LocalServerPort
	int port;

	@LocalManagementPort
	int managementPort;

	@Autowired
	SimulatorServer simulator;

	@Test
	void warmupRequestsAreKeptOutOfEveryFigureAndOutOfTheEnginesWindow() {
		BenchCommand.Result result = run("--num-prompts", 6, "--warmup", 3, "--max-concurrency", 3, "--output-len",
				OUTPUT);
		BenchReport r = result.report();
		assertThat(r.completed).isEqualTo(6);
		assertThat(r.ttft.count()).isEqualTo(6);
		assertThat(r.outputTokens).isEqualTo(6 * OUTPUT);
		assertThat(r.warmupRequests).isEqualTo(3);
		assertThat(r.warmupTtft.count()).isEqualTo(3);
		assertThat(r.firstWarmupTtftMs).isPositive();
		// the engine's counters moved by the measured requests only
		assertThat(engine(result, "generation_tokens")).isEqualTo(6.0 * OUTPUT);
		assertThat(finished(result)).isEqualTo(6.0);
		assertThat(result.engine().get("kv_cache_usage")).isNotNull();
		assertThat(result.engine().get("num_requests_waiting")).isNotNull();
	}

	@Test
	void anEngineStallMidStreamIsASpikeInTheMiddleThirdAndBreaksMaxgapGoodput() {
		BenchReport r = run("--num-prompts", 4, "--max-concurrency", 1, "--output-len", OUTPUT, "--stall-threshold",
				300, "--goodput", "maxgap:300", "--header", STALL_MID_STREAM)
			.report();
		assertThat(r.completed).isEqualTo(4);
		StreamShapeReport shape = r.shape;
		assertThat(shape.spikes[1]).isGreaterThanOrEqualTo(4);
		assertThat(shape.worstSpikeMs[1]).isGreaterThanOrEqualTo(490);
		assertThat(shape.streamP99Gap.count()).isEqualTo(4);
		assertThat(shape.streamP99Gap.p50()).isGreaterThanOrEqualTo(490);
		assertThat(shape.unstable).isEqualTo(4);
		assertThat(r.smooth).isZero();
		assertThat(r.good).isZero();
		assertThat(r.goodTokens).isZero();
		assertThat(r.outputTokens).isEqualTo(4 * OUTPUT);

		BenchReport lenient = run("--num-prompts", 4, "--max-concurrency", 1, "--output-len", OUTPUT, "--goodput",
				"maxgap:60000", "--header", STALL_MID_STREAM)
			.report();
		assertThat(lenient.good).isEqualTo(4);
		assertThat(lenient.goodTokens).isEqualTo(4 * OUTPUT);
	}

	@Test
	void aSmoothRunHasNoSpikeAndItsPerStreamP99GapIsTheEngineStep() {
		BenchReport r = run("--num-prompts", 4, "--max-concurrency", 1, "--output-len", OUTPUT).report();
		assertThat(r.shape.streamP99Gap.count()).isEqualTo(4);
		assertThat(r.shape.streamP99Gap.p50()).isBetween(4.5, 300.0);
		assertThat(r.goodTokens).as("no SLO: every successful request is good").isEqualTo(r.outputTokens);
	}

	@Test
	void aStreamThatReasonsFirstReportsItsFirstAnswerAfterTheReasoning() {
		BenchReport r = run("--num-prompts", 3, "--max-concurrency", 1, "--output-len", OUTPUT, "--header",
				"X-Sim-Reasoning-Tokens=10")
			.report();
		assertThat(r.shape.reasoningStreams).isEqualTo(3);
		// ten reasoning tokens at 5 ms steps or more come before the first answer
		assertThat(r.shape.firstAnswer.p50()).isGreaterThan(r.ttft.p50() + 9 * 4.5);
		BenchReport plain = run("--num-prompts", 3, "--output-len", OUTPUT).report();
		assertThat(plain.shape.reasoningStreams).isZero();
	}

	@Test
	void meanRequestsInFlightStaysUnderTheLimitAndMatchesLittlesLaw() {
		BenchReport r = run("--num-prompts", 12, "--max-concurrency", 4, "--output-len", OUTPUT).report();
		assertThat(r.meanInFlight).isGreaterThan(2).isLessThanOrEqualTo(4.0);
		assertThat(r.meanInFlight).isCloseTo(r.littlesLaw(), within(0.1 * r.meanInFlight));
	}

	@Test
	void datasetPromptsAreSentInOrder(@TempDir Path dir) throws Exception {
		Path dataset = dir.resolve("prompts.jsonl");
		Files.writeString(dataset,
				"""
						{"prompt": "say \\"hi\\" in twelve words please"}
						{"conversations": [{"from": "system", "value": "be brief"}, {"from": "human", "value": "why is the sky blue"}]}

						{"conversations": [{"role": "user", "content": "naïve café ünïcode"}]}
						""");
		BenchCommand.Result result = run("--num-prompts", 5, "--output-len", 8, "--dataset", dataset);
		assertThat(result.report().completed).isEqualTo(5);
		int[] tokens = { 8, 5, 5 };
		assertThat(result.report().inputTokens).isEqualTo(tokens[0] + tokens[1] + tokens[2] + tokens[0] + tokens[1]);
	}

	@Test
	void compareOfTwoRunsOfOneConfigurationPassesAndOneAgainstAStallingEngineFailsNamingTheFigure(@TempDir Path dir) {
		Object[] config = { "--num-prompts", 8, "--warmup", 2, "--max-concurrency", 2, "--output-len", OUTPUT };
		Path base = record(dir.resolve("base.json"), config);
		Path again = record(dir.resolve("again.json"), config);
		Path stalled = record(dir.resolve("stalled.json"), concat(config, "--header", STALL_MID_STREAM));
		Output same = bench("compare", base, again);
		assertThat(same.status()).as(same.out()).isZero();
		assertThat(same.out()).contains("verdict: PASS");
		Output worse = bench("compare", base, again, stalled);
		assertThat(worse.status()).as(worse.out()).isEqualTo(1);
		assertThat(worse.out()).containsPattern("verdict: FAIL: .*p99_stream_p99_gap_ms [0-9.]+ -> [0-9.]+");
		assertThat(worse.out()).containsPattern("smooth_stream_goodput [0-9.]+ -> 0.00");
		Output ungated = bench("compare", base, stalled, "--no-default-gates", "--gate", "failed:0:0");
		assertThat(ungated.status()).as(ungated.out()).isZero();
		Output tightened = bench("compare", base, again, "--gate", "p99_stream_p99_gap_ms:off", "--gate",
				"median_itl_ms:0:0.001");
		assertThat(tightened.out()).doesNotContain("p99_stream_p99_gap_ms:");
		assertThat(tightened.out()).contains("median_itl_ms:0%:0.001");
	}

	@Test
	void compareRefusesRunsOfAnotherWorkloadAndFilesThatAreNotRecords(@TempDir Path dir) throws Exception {
		Path a = record(dir.resolve("a.json"), "--num-prompts", 3, "--output-len", 8);
		Path b = record(dir.resolve("b.json"), "--num-prompts", 3, "--output-len", 9);
		Output different = bench("compare", a, b);
		assertThat(different.status()).isEqualTo(2);
		assertThat(different.err()).contains("do not compare", "output_len");
		Path other = Files.writeString(dir.resolve("other.json"), "{\"completed\": 3}");
		assertThat(bench("compare", a, other).status()).isEqualTo(2);
		assertThat(bench("compare", a).status()).isEqualTo(2);
	}

	@Test
	void sweepWritesEachPointsRecordASummaryWithTheKneeAndAChart(@TempDir Path dir) throws Exception {
		Path out = dir.resolve("sweep");
		Output sweep = bench("sweep", "--out", out, "--max-concurrency", "1,2,4", "--num-prompts", 4, "--warmup", 1,
				"--output-len", 16, "--engine-metrics", this.simulator.baseUrl() + "/metrics");
		assertThat(sweep.status()).as(sweep.err()).isZero();
		assertThat(sweep.out()).contains("Sweep: max_concurrency", "knee: max_concurrency ", "goodput peak");
		for (String point : List.of("1", "2", "4")) {
			JsonNode record = read(out.resolve("max-concurrency-" + point + ".json"));
			assertThat(record.path("workload").path("max_concurrency").asInt()).isEqualTo(Integer.parseInt(point));
			assertThat(record.path("warmup_requests").asInt()).isEqualTo(1);
			assertThat(record.path("completed").asInt()).isEqualTo(4);
		}
		JsonNode summary = read(out.resolve("summary.json"));
		assertThat(summary.path("points")).hasSize(3);
		assertThat(List.of(1.0, 2.0, 4.0)).contains(summary.path("knee").asDouble());
		assertThat(Files.readString(out.resolve("summary.txt"))).contains("knee");
		BufferedImage chart = ImageIO.read(out.resolve(SweepCommand.CHART).toFile());
		assertThat(chart.getWidth()).isEqualTo(SweepChart.WIDTH);
		assertThat(chart.getHeight()).isEqualTo(SweepChart.HEIGHT);
	}

	@Test
	void everyKeyOfTheRecordIsDocumented(@TempDir Path dir) throws Exception {
		Path file = record(dir.resolve("run.json"), "--num-prompts", 3, "--output-len", 12, "--warmup", 1, "--goodput",
				"ttft:60000", "--header", "X-Sim-Reasoning-Tokens=4");
		JsonNode record = read(file);
		assertThat(record.path("schema").asString()).isEqualTo(RunRecord.SCHEMA);
		assertThat(record.path("schema_version").asInt()).isEqualTo(RunRecord.SCHEMA_VERSION);
		assertThat(record.path("headers").get(0).asString()).isEqualTo("X-Sim-Reasoning-Tokens");
		assertThat(record.path("engine").path("finished_requests").path("length").asDouble()).isEqualTo(3);
		String doc = Files.readString(Path.of("docs/bench-record.md"));
		List<String> documented = new ArrayList<>();
		Matcher key = Pattern.compile("`([a-z0-9_]+)`").matcher(doc);
		while (key.find()) {
			documented.add(key.group(1));
		}
		List<String> keys = new ArrayList<>();
		keys(record, "", keys);
		assertThat(documented).containsAll(keys);
	}

	/** Every key, nested ones too, but not the engine's series names. */
	private static void keys(JsonNode node, String parent, List<String> keys) {
		if (!node.isObject() || parent.equals("counters") || parent.equals("info") || parent.equals("errors")
				|| parent.equals("finished_requests")) {
			return;
		}
		for (String name : node.propertyNames()) {
			keys.add(name);
			keys(node.get(name), name, keys);
		}
	}

	private Path record(Path file, Object... options) {
		Output output = bench(concat(options, "--json", file));
		assertThat(output.status()).as(output.err()).isZero();
		return file;
	}

	private Output bench(Object... args) {
		List<String> list = new ArrayList<>();
		boolean subcommand = args.length > 0 && ("compare".equals(args[0]) || "sweep".equals(args[0]));
		for (Object arg : args) {
			list.add(String.valueOf(arg));
		}
		if (!subcommand || "sweep".equals(args[0])) {
			list.addAll(List.of("--base-url", "http://127.0.0.1:" + this.port, "--seed", "3", "--no-progress"));
		}
		if (!subcommand) {
			list.addAll(List.of("--engine-metrics", this.simulator.baseUrl() + "/metrics"));
		}
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		ByteArrayOutputStream err = new ByteArrayOutputStream();
		int status = BenchCommand.run(list.toArray(String[]::new), print(out), print(err));
		return new Output(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
	}

	private BenchCommand.Result run(Object... options) {
		List<String> args = new ArrayList<>(List.of("--base-url", "http://127.0.0.1:" + this.port, "--engine-metrics",
				this.simulator.baseUrl() + "/metrics", "--seed", "3", "--no-progress"));
		for (Object option : options) {
			args.add(String.valueOf(option));
		}
		return BenchCommand.execute(BenchOptions.parse(args.toArray(String[]::new)), System.err);
	}

	private static double engine(BenchCommand.Result result, String key) {
		return ((Number) result.engine().get(key)).doubleValue();
	}

	@SuppressWarnings("unchecked")
	private static double finished(BenchCommand.Result result) {
		return ((java.util.Map<String, Double>) result.engine().get("finished_requests")).values()
			.stream()
			.mapToDouble(Double::doubleValue)
			.sum();
	}

	private static JsonNode read(Path file) throws Exception {
		return JsonMapper.builder().build().readTree(Files.readString(file));
	}

	private static Object[] concat(Object[] first, Object... more) {
		List<Object> all = new ArrayList<>(List.of(first));
		all.addAll(List.of(more));
		return all.toArray();
	}

	private static PrintStream print(ByteArrayOutputStream bytes) {
		return new PrintStream(bytes, true, StandardCharsets.UTF_8);
	}

	private record Output(int status, String out, String err) {
	}

}
