package dev.tokengap.bench;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

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
 * {@code tokengap bench} over real HTTP against tokengap in front of its in-process
 * simulator (demo mode, no background load), and straight against the simulator; the
 * failure rule and the endpoint filter of the comparison are also tested against a
 * scripted upstream in {@link BenchResponsesIntegrationTests}.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = { "management.server.port=0",
		"tokengap.mode=demo", "tokengap.demo.load=false", "tokengap.sim.step-fixed-cost=5ms" })
class BenchIntegrationTests {

	private static final int PROMPTS = 24;

	private static final int OUTPUT = 16;

	@LocalServerPort
	int port;

	@LocalManagementPort
	int managementPort;

	@Autowired
	SimulatorServer simulator;

	@Test
	void everyRequestCompletesAndEveryEventIsTimed() {
		BenchCommand.Result result = run("--num-prompts", PROMPTS, "--max-concurrency", 8, "--input-len", "16:64",
				"--output-len", OUTPUT);
		BenchReport r = result.report();
		assertThat(r.completed).isEqualTo(PROMPTS);
		assertThat(r.failed).isZero();
		assertThat(r.outputTokens).isEqualTo(PROMPTS * OUTPUT);
		assertThat(r.ttft.count()).isEqualTo(PROMPTS);
		assertThat(r.itl.count()).isEqualTo(PROMPTS * (OUTPUT - 1));
		for (Distribution d : List.of(r.ttft, r.tpot, r.itl, r.e2el, r.maxGap)) {
			assertThat(d.p50()).isPositive().isLessThanOrEqualTo(d.p90());
			assertThat(d.p90()).isLessThanOrEqualTo(d.p95());
			assertThat(d.p95()).isLessThanOrEqualTo(d.p99());
			assertThat(d.p99()).isLessThanOrEqualTo(d.max());
		}
		// 5 ms engine steps plus per-sequence cost: a TPOT of a few ms,
		// never less than a step
		assertThat(r.tpot.p50()).isBetween(4.5, 100.0);
		assertThat(r.e2el.mean()).isGreaterThan(r.ttft.mean() + (OUTPUT - 1) * 4.5);
		assertThat(r.jitter.count()).isEqualTo(PROMPTS);
		assertThat(r.smooth).isEqualTo(PROMPTS);
	}

	@Test
	void tokengapAndTheEngineCountWhatTheClientSaw() {
		BenchCommand.Result result = run("--num-prompts", PROMPTS, "--output-len", OUTPUT);
		MetricsComparison.Result compared = result.comparison();
		MetricsComparison.Row ttft = compared.rows.get("TTFT");
		MetricsComparison.Row itl = compared.rows.get("ITL");
		MetricsComparison.Row e2el = compared.rows.get("E2EL");
		assertThat(ttft.tokengapCount()).isEqualTo(PROMPTS);
		assertThat(ttft.engineCount()).isEqualTo(PROMPTS);
		assertThat(itl.tokengapCount()).isEqualTo(PROMPTS * (OUTPUT - 1));
		assertThat(e2el.tokengapCount()).isEqualTo(PROMPTS);
		assertThat(e2el.engineCount()).isEqualTo(PROMPTS);
		for (MetricsComparison.Row row : List.of(ttft, itl, e2el)) {
			assertThat(row.tokengapP50()).isPositive().isLessThanOrEqualTo(row.tokengapP99());
			assertThat(row.engineP50()).isPositive().isLessThanOrEqualTo(row.engineP99());
			assertThat(row.clientBucketedP50()).isPositive();
		}
		// Same events, same edges, same estimator: the proxy's and the client's medians
		// agree (each event is timed when written by one and when read by the other)
		assertThat(itl.tokengapP50()).isCloseTo(itl.clientBucketedP50(), within(3.0));
		// The client cannot see a first token before the engine produced it
		assertThat(ttft.clientP50()).isGreaterThanOrEqualTo(ttft.engineP50() * 0.5);
	}

	/**
	 * The simulator serves vLLM's Responses stream: every request completes, each delta
	 * is timed, and tokengap's {@code endpoint="responses"} series saw the same streams
	 * and gaps.
	 */
	@Test
	void theResponsesApiIsTimedAndComparedWithTokengapsResponsesSeries() {
		BenchCommand.Result result = run("--endpoint", "responses", "--num-prompts", PROMPTS, "--max-concurrency", 8,
				"--output-len", OUTPUT);
		BenchReport r = result.report();
		assertThat(r.completed).isEqualTo(PROMPTS);
		assertThat(r.failed).isZero();
		assertThat(r.outputTokens).as("response.usage.output_tokens").isEqualTo(PROMPTS * OUTPUT);
		assertThat(r.itl.count()).isEqualTo(PROMPTS * (OUTPUT - 1));
		MetricsComparison.Row ttft = result.comparison().rows.get("TTFT");
		MetricsComparison.Row itl = result.comparison().rows.get("ITL");
		assertThat(ttft.tokengapCount()).isEqualTo(PROMPTS);
		assertThat(ttft.engineCount()).isEqualTo(PROMPTS);
		assertThat(itl.tokengapCount()).isEqualTo(PROMPTS * (OUTPUT - 1));
		assertThat(result.comparison().rows.get("E2EL").tokengapCount()).isEqualTo(PROMPTS);
		assertThat(itl.tokengapP50()).isCloseTo(itl.clientBucketedP50(), within(3.0));
	}

	@Test
	void goodputCountsRequestsThatMeetEverySlo() {
		assertThat(run("--num-prompts", 6, "--goodput", "ttft:600000", "e2el:600000").report().good).isEqualTo(6);
		assertThat(run("--num-prompts", 6, "--goodput", "ttft:600000", "tpot:0.001").report().good).isZero();
		assertThat(run("--num-prompts", 6, "--goodput", "e2el:0").report().good).isZero();
		BenchReport lenient = run("--num-prompts", 6, "--stall-threshold", 600000).report();
		assertThat(lenient.smooth).isEqualTo(6);
		BenchReport strict = run("--num-prompts", 6, "--stall-threshold", 0.001).report();
		assertThat(strict.smooth).isZero();
		assertThat(strict.completed).isEqualTo(6);
	}

	@Test
	void printsTheTablesAndWritesJsonThatParses(@TempDir Path dir) throws Exception {
		Path json = dir.resolve("result.json");
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		ByteArrayOutputStream err = new ByteArrayOutputStream();
		int status = BenchCommand.run(args("--num-prompts", 8, "--request-rate", 50, "--output-len", "8:16",
				"--goodput", "ttft:60000", "--json", json), print(out), print(err));
		String table = out.toString(StandardCharsets.UTF_8);
		assertThat(status).isZero();
		assertThat(table).contains("Successful requests:", "Failed requests:", "Request goodput (req/s):",
				"Output token throughput (tok/s):", "Smooth streams (no gap >= 400.00 ms):", "TTFT", "TPOT", "ITL",
				"E2EL", "Worst gap per stream", "Jitter p99/p50", "Client vs tokengap vs engine");
		assertThat(table.lines().filter((line) -> line.startsWith("ITL ")).toList()).hasSize(2);
		JsonNode root = JsonMapper.builder().build().readTree(Files.readString(json));
		assertThat(root.get("completed").asInt()).isEqualTo(8);
		assertThat(root.get("failed").asInt()).isZero();
		assertThat(root.get("request_rate").asDouble()).isEqualTo(50.0);
		assertThat(root.get("median_ttft_ms").asDouble()).isPositive();
		assertThat(root.get("p99_itl_ms").asDouble()).isPositive();
		assertThat(root.get("request_goodput").asDouble()).isPositive();
		assertThat(root.get("smooth_stream_goodput").asDouble()).isEqualTo(1.0);
		assertThat(root.path("comparison").path("itl").get("tokengap_count").asDouble()).isPositive();
		assertThat(root.path("comparison").path("ttft").get("engine_p99_ms").asDouble()).isPositive();
		assertThat(err.toString(StandardCharsets.UTF_8)).contains("8/8 done, 0 failed");
	}

	@Test
	void completionsStraightToTheEngineAskingItForTheModel() {
		BenchCommand.Result result = BenchCommand.execute(BenchOptions.parse("--base-url", this.simulator.baseUrl(),
				"--endpoint", "completions", "--num-prompts", "5", "--output-len", "4", "--no-progress"), System.err);
		assertThat(result.model()).isEqualTo("sim-llama-3-8b");
		assertThat(result.report().completed).isEqualTo(5);
		assertThat(result.report().outputTokens).isEqualTo(20);
		assertThat(result.comparison()).isNull();
	}

	@Test
	void failedRequestsAreCountedWithTheirReason() {
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		int status = BenchCommand.run(new String[] { "--base-url", "http://127.0.0.1:" + this.port, "--model",
				"no-such-model", "--num-prompts", "3", "--no-progress" }, print(out),
				print(new ByteArrayOutputStream()));
		assertThat(status).isEqualTo(1);
		assertThat(out.toString(StandardCharsets.UTF_8)).contains("Failed requests:", "failed: 3 x HTTP 404");
	}

	private BenchCommand.Result run(Object... options) {
		return BenchCommand.execute(BenchOptions.parse(args(options)), System.err);
	}

	private String[] args(Object... options) {
		List<String> args = new ArrayList<>(List.of("--base-url", "http://127.0.0.1:" + this.port, "--tokengap-metrics",
				"http://127.0.0.1:" + this.managementPort + "/actuator/prometheus", "--engine-metrics",
				this.simulator.baseUrl() + "/metrics", "--seed", "3", "--no-progress"));
		for (Object option : options) {
			args.add(String.valueOf(option));
		}
		if (args.contains("--json")) {
			args.remove("--no-progress");
		}
		return args.toArray(String[]::new);
	}

	private static PrintStream print(ByteArrayOutputStream bytes) {
		return new PrintStream(bytes, true, StandardCharsets.UTF_8);
	}

}
