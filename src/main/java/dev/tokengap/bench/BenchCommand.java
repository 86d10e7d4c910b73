package dev.tokengap.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import org.slf4j.ILoggerFactory;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code tokengap bench}: sends a streamed load to tokengap (or straight to the engine),
 * times every SSE event as it arrives and prints {@code vllm bench serve}'s figures with
 * tokengap's own, and, given their metrics URLs, what tokengap and the engine measured
 * for the same run.
 *
 * <pre>
 * java -jar target/tokengap-*.jar bench --base-url http://127.0.0.1:8080 --num-prompts 200 \
 *     --request-rate 20 --tokengap-metrics http://127.0.0.1:8081/actuator/prometheus
 * </pre>
 */
public final class BenchCommand {

	private BenchCommand() {
	}

	/**
	 * Runs the command, or its {@code compare} or {@code sweep} subcommand.
	 * @param args the arguments after {@code bench}
	 * @return the exit status: 0 when the run completed with at least one successful
	 * request, 1 when every request failed, 2 on a usage error ({@link CompareCommand}
	 * and {@link SweepCommand} say theirs)
	 */
	public static int run(String[] args, PrintStream out, PrintStream err) {
		if (args.length > 0 && "compare".equals(args[0])) {
			return CompareCommand.run(Arrays.copyOfRange(args, 1, args.length), out, err);
		}
		if (args.length > 0 && "sweep".equals(args[0])) {
			return SweepCommand.run(Arrays.copyOfRange(args, 1, args.length), out, err);
		}
		BenchOptions options;
		try {
			if (args.length == 0 || List.of(args).contains("--help") || List.of(args).contains("-h")) {
				out.print(BenchOptions.USAGE);
				return (args.length == 0) ? 2 : 0;
			}
			options = BenchOptions.parse(args);
		}
		catch (IllegalArgumentException ex) {
			err.println("bench: " + ex.getMessage());
			err.print(BenchOptions.USAGE);
			return 2;
		}
		quietLogging();
		Result result;
		try {
			result = execute(options, err);
		}
		catch (IllegalArgumentException | UncheckedIOException ex) {
			err.println("bench: " + ex.getMessage());
			return 2;
		}
		out.print(result.report().table());
		if (result.comparison() != null) {
			out.print(result.comparison().table());
		}
		if (options.json() != null) {
			try {
				Files.writeString(options.json(), RunRecord.text(result));
			}
			catch (IOException ex) {
				err.println("bench: could not write " + options.json() + ": " + ex.getMessage());
				return 1;
			}
		}
		return (result.report().completed > 0) ? 0 : 1;
	}

	/** Runs a benchmark and returns its figures (for tests and embedding). */
	static Result execute(BenchOptions options, PrintStream err) {
		String model = (options.model() != null) ? options.model() : firstModel(options);
		PromptDataset dataset = PromptDataset.load(options.dataset());
		List<RequestPlan.Request> warmup = RequestPlan.warmup(options, model, dataset);
		List<RequestPlan.Request> plan = RequestPlan.of(options, model, dataset);
		int connections = (options.maxConcurrency() > 0) ? options.maxConcurrency()
				: Math.max(options.numPrompts(), options.warmup());
		LoadRun load = new LoadRun(BenchClients.load(Math.min(connections, 10_000), options.headers()),
				options.baseUrl() + options.path(), options.maxConcurrency());
		LoadRun.Outcome warm = new LoadRun.Outcome(List.of(), 0);
		if (!warmup.isEmpty()) {
			try (Progress progress = new Progress(err, "warm-up", warmup.size(), options.progress())) {
				warm = load.run(warmup, progress);
			}
		}
		// The measured window starts here: the scrapes before it follow the warm-up.
		MetricsComparison comparison = new MetricsComparison(options.tokengapMetrics(), options.engineMetrics(),
				options.endpointLabel());
		EngineRecorder engine = (options.engineMetrics() != null) ? new EngineRecorder(options.engineMetrics()) : null;
		if (comparison.enabled()) {
			comparison.before();
		}
		if (engine != null) {
			engine.start();
		}
		LoadRun.Outcome outcome;
		try (Progress progress = new Progress(err, plan.size(), options.progress())) {
			outcome = load.run(plan, progress);
		}
		BenchReport report = new BenchReport(options, outcome, warm);
		MetricsComparison.Result compared = null;
		if (comparison.enabled()) {
			sleep(MetricsComparison.SETTLE);
			compared = comparison.after(report);
		}
		Map<String, Object> engineRecord = (engine != null) ? engine.stop() : null;
		return new Result(options, model, report, compared, engineRecord);
	}

	/** vLLM's client asks for the first served model when none is given. */
	private static String firstModel(BenchOptions options) {
		String body = BenchClients.SMALL.responseTimeout(Duration.ofSeconds(10))
			.headers((headers) -> options.headers().forEach(headers::set))
			.get()
			.uri(URI.create(options.baseUrl() + "/v1/models"))
			.responseSingle((response, content) -> content.asString())
			.block(Duration.ofSeconds(10));
		JsonNode first = JsonMapper.builder().build().readTree((body != null) ? body : "{}").path("data").path(0);
		if (!first.has("id")) {
			throw new IllegalStateException("--model not given and " + options.baseUrl() + "/v1/models lists none");
		}
		return first.get("id").asString();
	}

	private static void sleep(Duration duration) {
		try {
			Thread.sleep(duration.toMillis());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/** Without Spring, Logback would print Netty's debug logging: keep warnings only. */
	static void quietLogging() {
		ILoggerFactory factory = LoggerFactory.getILoggerFactory();
		if (factory instanceof ch.qos.logback.classic.LoggerContext logback) {
			logback.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME).setLevel(ch.qos.logback.classic.Level.WARN);
		}
	}

	public static void main(String[] args) {
		System.exit(run(args, System.out, System.err));
	}

	/**
	 * A run's figures.
	 *
	 * @param options what was run
	 * @param model the model asked for
	 * @param report the client's figures
	 * @param comparison the metrics comparison, or null without metrics URLs
	 * @param engine the engine's side of the measured window, or null without its metrics
	 * URL
	 */
	record Result(BenchOptions options, String model, BenchReport report, MetricsComparison.Result comparison,
			Map<String, Object> engine) {
	}

}
