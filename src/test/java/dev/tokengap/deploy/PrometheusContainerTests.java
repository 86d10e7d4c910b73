package dev.tokengap.deploy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.Network;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.images.builder.Transferable;
import org.testcontainers.lifecycle.Startables;
import org.testcontainers.utility.DockerImageName;

import dev.tokengap.deploy.AlertRules.Alert;
import dev.tokengap.deploy.Dashboards.Dashboard;
import dev.tokengap.deploy.Dashboards.Query;
import dev.tokengap.deploy.PrometheusApi.Result;
import dev.tokengap.testsupport.ProjectFiles;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Prometheus ({@code prom/prometheus:v2.42.0}) with the compose demo's configuration and
 * the one rules file scrapes a tokengap container and the simulator behind it (few KV
 * blocks, so it preempts), under a load with injected engine stalls,
 * {@code /v1/responses} and {@code /v1/messages} streams, in-band engine errors and
 * refused requests (LoadDriver). Then every expression of every dashboard panel (template
 * variables resolved as Grafana would) and every alert rule goes through the query API:
 * each must be valid and return data. A query that reads only vLLM series the simulator
 * does not export is reported as pending instead (MetricsContractTests keeps every
 * contract series registered, so a query on one that returns nothing fails).
 */
@ExtendWith(DockerEngine.class)
class PrometheusContainerTests {

	static final Pattern LABEL_VALUES = Pattern.compile("^label_values\\((.*),\\s*(\\w+)\\)$");

	/**
	 * What Grafana substitutes for its built-in interval variables (scrape interval 5s).
	 */
	static final Map<String, String> GRAFANA_BUILTINS = Map.of("__rate_interval", "1m", "__interval", "15s", "__range",
			"5m");

	static Network network;

	static GenericContainer<?> simulator;

	static GenericContainer<?> tokengap;

	static GenericContainer<?> prometheus;

	static PrometheusApi api;

	static LoadDriver load;

	@BeforeAll
	static void start() {
		TokengapImage.get();
		network = Network.newNetwork();
		// 48 blocks of 16 tokens for streams of ~150 + 60 tokens: the engine must
		// preempt. One draft token per step, accepted half the time: the engine-health
		// dashboard's speculative-decoding panel has data too. Per-request metrics, as
		// vLLM's --enable-per-request-metrics: the outside-engine panel has data.
		simulator = TokengapImage.simulator(network, "simulator", "--tokengap.sim.num-kv-blocks=48",
				"--tokengap.sim.max-model-len=512", "--tokengap.sim.num-speculative-tokens=1",
				"--tokengap.sim.spec-acceptance-rate=0.5", "--tokengap.sim.per-request-metrics=true");
		tokengap = TokengapImage.proxy(network, "tokengap", "http://simulator:8000");
		prometheus = new GenericContainer<>(DockerImageName.parse("prom/prometheus:v2.42.0")).withNetwork(network)
			.withCopyToContainer(Transferable.of(ProjectFiles.read("docker/prometheus.yml")),
					"/etc/prometheus/prometheus.yml")
			.withCopyToContainer(Transferable.of(ProjectFiles.read(AlertRules.FILE)),
					"/etc/prometheus/rules/tokengap-rules.yaml")
			.withExposedPorts(9090)
			.waitingFor(Wait.forHttp("/-/ready").forPort(9090).withStartupTimeout(Duration.ofMinutes(1)));
		long start = System.nanoTime();
		Startables.deepStart(simulator, tokengap, prometheus).join();
		System.out.printf("simulator, tokengap and Prometheus ready in %d ms%n",
				TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
		api = new PrometheusApi("http://" + prometheus.getHost() + ":" + prometheus.getMappedPort(9090));
		load = new LoadDriver("http://" + tokengap.getHost() + ":" + tokengap.getMappedPort(8080), 6,
				Duration.ofMinutes(5));
		awaitScenario();
	}

	@AfterAll
	static void stop() throws InterruptedException {
		if (load != null) {
			load.close();
			System.out.printf("load: %d streams completed, %d failed as asked (engine error, refused), %d failed%n",
					load.completed(), load.faults(), load.failed());
		}
		for (GenericContainer<?> container : new GenericContainer<?>[] { prometheus, tokengap, simulator }) {
			if (container != null) {
				container.stop();
			}
		}
		if (network != null) {
			network.close();
		}
	}

	/**
	 * Waits (bounded) until Prometheus has seen stalls, preemptions and enough streams to
	 * rate.
	 */
	private static void awaitScenario() {
		long start = System.nanoTime();
		await("20 completed streams", () -> api.scalar("sum(tokengap_streams_total{outcome=\"completed\"})") >= 20);
		await("stalls (X-Sim-Engine-Stall)", () -> api.scalar("sum(tokengap_stalls_total)") > 0);
		await("preemptions (few KV blocks)", () -> api.scalar("sum(vllm:num_preemptions_total)") > 0);
		await("streams with a jitter ratio", () -> api.scalar("sum(tokengap_stream_jitter_ratio_count)") > 0);
		await("a rate over recent scrapes",
				() -> api.scalar("sum(rate(tokengap_inter_token_latency_seconds_count[1m]))") > 0);
		// Of the chat streams, only those with usage carry the engine's per-request
		// figures, one request in twelve: the outside-engine panel rates them.
		await("the engine's own figures of a chat stream, over recent scrapes", () -> api
			.scalar("count(rate(tokengap_ttft_outside_engine_seconds_count{endpoint=\"chat_completions\"}[1m]))") > 0
				&& api.scalar(
						"count(rate(tokengap_engine_queue_time_seconds_count{endpoint=\"chat_completions\"}[1m]))") > 0);
		// A spike is counted once its stream has ended and the scrapes after its gap are
		// in: the spike panels rate a series that may come after every other one.
		await("spikes by cause, over recent scrapes",
				() -> api.scalar("count(rate(tokengap_gap_spike_seconds_count[1m]))") > 0);
		await("an engine_error stream (X-Sim-Error-After)",
				() -> api.scalar("sum(tokengap_streams_total{outcome=\"engine_error\"})") > 0);
		await("invalid streams (unknown model, max_tokens too large)",
				() -> api.scalar("sum(tokengap_streams_total{outcome=\"invalid\"})") > 0);
		await("streams on /v1/responses and /v1/messages", () -> api
			.scalar("count(sum by (endpoint) (tokengap_streams_total{endpoint=~\"responses|messages\"}) > 0)") >= 2);
		await("every alert rule evaluated", () -> !api.alertingRules().isEmpty()
				&& api.alertingRules().values().stream().allMatch((health) -> health.startsWith("ok")));
		await("every recording rule evaluated", () -> !api.recordingRules().isEmpty()
				&& api.recordingRules().values().stream().allMatch((health) -> health.startsWith("ok")));
		// A rule evaluated before its rate had two samples records nothing until its next
		// evaluation: wait for every recorded series (an alert or a panel uses each).
		await("every recorded series has data",
				() -> AlertRules.recordings()
					.keySet()
					.stream()
					.allMatch((name) -> api.scalar("count(" + name + ")") > 0));
		System.out.printf("scenario in Prometheus after %d ms: %.0f completed streams, %.0f stalls, %.0f preemptions%n",
				TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start),
				api.scalar("sum(tokengap_streams_total{outcome=\"completed\"})"),
				api.scalar("sum(tokengap_stalls_total)"), api.scalar("sum(vllm:num_preemptions_total)"));
	}

	private static void await(String what, BooleanSupplier condition) {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(150);
		while (!condition.getAsBoolean()) {
			if (System.nanoTime() > deadline) {
				throw new AssertionError("Prometheus never showed " + what + " within 150 s (load: " + load.completed()
						+ " streams completed, " + load.failed() + " failed)");
			}
			try {
				Thread.sleep(500);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new AssertionError(ex);
			}
		}
	}

	@Test
	void prometheusLoadedEveryAlertRuleAndEvaluatesItWithoutError() {
		Map<String, String> rules = api.alertingRules();
		assertThat(rules.keySet()).containsExactlyInAnyOrderElementsOf(AlertRulesTests.ALERTS);
		assertThat(rules.values()).allMatch("ok"::equals);
		Map<String, String> recordings = api.recordingRules();
		assertThat(recordings.keySet()).containsExactlyInAnyOrderElementsOf(AlertRules.recordings().keySet());
		assertThat(recordings.values()).allMatch("ok"::equals);
	}

	@Test
	void everyDashboardQueryAndAlertRuleIsValidAndReturnsData() {
		Report report = new Report();
		for (Dashboard dashboard : Dashboards.load()) {
			Map<String, String> variables = resolveVariables(dashboard, report);
			for (Query query : dashboard.queries()) {
				report.expectData(query.origin(), query.expr(), PromQl.substitute(query.expr(), variables));
			}
		}
		for (Alert alert : AlertRules.load()) {
			report.expectValid("alert " + alert.name(), alert.expr());
			List<String> signals = PromQl.signals(alert.expr());
			for (int i = 0; i < signals.size(); i++) {
				report.expectData("alert " + alert.name() + " / signal " + (i + 1), signals.get(i), signals.get(i));
			}
		}
		report.print();
		assertThat(report.failures).as("queries that are invalid or return no data").isEmpty();
		assertThat(report.withData).isPositive();
	}

	/**
	 * Every trigger of the chart's ScaledObject, rendered for this Prometheus (the demo's
	 * namespace, the simulator's model), read as KEDA's Prometheus scaler reads it: a
	 * valid query with exactly one series (more is an error to KEDA) whose value is a
	 * finite number (none or NaN would count as 0, scaling on nothing).
	 */
	@Test
	void everyScaledObjectTriggerQueryReturnsOneNumberAsKedaReadsIt() {
		List<Map<String, Object>> triggers = ChartAutoscalingTests.triggers(ChartTests.render(
				ChartAutoscalingTests.ENABLED[0], ChartAutoscalingTests.ENABLED[1], ChartAutoscalingTests.ENABLED[2],
				ChartAutoscalingTests.EVERY_TRIGGER[0], ChartAutoscalingTests.EVERY_TRIGGER[1],
				"autoscaling.prometheus.selector=namespace=\"demo\"", "vllm.servedModelName=" + TokengapImage.MODEL));
		assertThat(triggers).hasSize(3);
		for (Map<String, Object> trigger : triggers) {
			String query = (String) ChartTests.map(trigger, "metadata").get("query");
			List<String> values = api.values(query);
			System.out.printf("  [trigger %s] %s -> %s%n", trigger.get("name"), query, values);
			assertThat(values).as("%s: one series", query).hasSize(1);
			double value = Double.parseDouble(values.get(0));
			assertThat(Double.isFinite(value)).as("%s = %s", query, values.get(0)).isTrue();
			assertThat(value).isGreaterThanOrEqualTo(0);
		}
		assertThat(api.values((String) ChartTests.map(triggers.get(2), "metadata").get("query")).get(0))
			.as("stalls were injected: the stalled share is above 0")
			.isNotEqualTo("0");
	}

	/**
	 * Resolves namespace, pod, model_name and endpoint as Grafana does: each variable's
	 * label_values query. Of its values the one with the most requests is used, as
	 * someone looking at this load would pick (the first in order would be the refused
	 * unknown model's {@code other}).
	 */
	private static Map<String, String> resolveVariables(Dashboard dashboard, Report report) {
		Map<String, String> values = new LinkedHashMap<>(GRAFANA_BUILTINS);
		for (var variable : dashboard.variables()) {
			if (!"query".equals(variable.path("type").asString())) {
				continue;
			}
			String name = variable.path("name").asString();
			String query = Dashboards.variableQuery(variable);
			Matcher matcher = LABEL_VALUES.matcher(query);
			assertThat(matcher.matches()).as("%s: %s", name, query).isTrue();
			String selector = PromQl.substitute(matcher.group(1), values);
			Set<String> found = api.labelValues(selector, matcher.group(2));
			report.variable(dashboard.name() + " / $" + name, query, found);
			if (found.isEmpty() && "cluster".equals(name)) {
				// One Prometheus, no `cluster` external label: Grafana offers only All,
				// which matches series without the label.
				assertThat(variable.path("includeAll").asBoolean()).isTrue();
				values.put(name, variable.path("allValue").asString());
				continue;
			}
			assertThat(found).as("values of $%s (%s)", name, query).isNotEmpty();
			values.put(name, regexEscaped(busiest(selector, matcher.group(2), found)));
		}
		return values;
	}

	private static String busiest(String selector, String label, Set<String> values) {
		String busiest = values.iterator().next();
		double most = -1;
		for (String value : values) {
			double requests = api.scalar("sum(" + PromQl.withMatcher(selector, label, value) + ")");
			if (requests > most) {
				busiest = value;
				most = requests;
			}
		}
		return busiest;
	}

	/** As Grafana escapes a value for a regex matcher, inside a PromQL string. */
	private static String regexEscaped(String value) {
		StringBuilder escaped = new StringBuilder();
		for (char c : value.toCharArray()) {
			if (".+*?^$()[]{}|\\".indexOf(c) >= 0) {
				escaped.append("\\\\");
			}
			escaped.append(c);
		}
		return escaped.toString();
	}

	/** Every expression run, with what it returned. */
	static final class Report {

		final List<String> lines = new ArrayList<>();

		final List<String> failures = new ArrayList<>();

		final Set<String> pendingSeries = new LinkedHashSet<>();

		int total;

		int rules;

		int firing;

		int withData;

		int pending;

		void variable(String origin, String query, Set<String> values) {
			this.lines.add(String.format("  [variable] %s: %s -> %s", origin, query, values));
		}

		void expectValid(String origin, String expr) {
			Result result = api.query(expr);
			this.rules++;
			this.firing += (result.samples() > 0) ? 1 : 0;
			String outcome = (result.error() != null) ? "INVALID " + result.error()
					: "valid, " + ((result.samples() > 0) ? "firing now" : "silent now");
			this.lines.add(String.format("  [%s] %s: %s", outcome, origin, oneLine(expr)));
			if (result.error() != null) {
				this.failures.add(origin + ": " + result.error());
			}
		}

		void expectData(String origin, String expr, String resolved) {
			Result result = api.query(resolved);
			this.total++;
			String status;
			if (result.error() != null) {
				status = "INVALID " + result.error();
				this.failures.add(origin + ": " + result.error() + " in " + oneLine(resolved));
			}
			else if (result.hasData()) {
				status = "data: " + result.samples() + " series";
				this.withData++;
			}
			else {
				Set<String> notSimulated = notSimulated(expr);
				if (!notSimulated.isEmpty()) {
					status = "PENDING, not exported by the simulator (a real vLLM has them): " + notSimulated;
					this.pending++;
					this.pendingSeries.addAll(notSimulated);
				}
				else {
					status = "NO DATA" + ((result.nanSamples() > 0) ? " (NaN only)" : "");
					this.failures.add(origin + ": no data from " + oneLine(resolved));
				}
			}
			this.lines.add(String.format("  [%s] %s: %s", status, origin, oneLine(expr)));
		}

		/**
		 * The expression reads only vLLM series the simulator does not export (beside
		 * contract series): a panel that says it is empty against the simulator.
		 */
		private Set<String> notSimulated(String expr) {
			Set<String> vllm = new LinkedHashSet<>();
			for (String series : PromQl.series(expr)) {
				if (series.startsWith("vllm:")) {
					vllm.add(series);
				}
			}
			return (!vllm.isEmpty() && SimulatorSeries.NOT_SIMULATED.containsAll(vllm)) ? vllm : Set.of();
		}

		void print() {
			System.out.println("Prometheus evaluated these dashboard and alert expressions:");
			this.lines.forEach(System.out::println);
			System.out.printf("%d expressions expected to return data: %d returned data, %d pending (series the "
					+ "simulator does not export: %s); %d alert expressions valid (%d firing now); %d failures%n",
					this.total, this.withData, this.pending, this.pendingSeries, this.rules, this.firing,
					this.failures.size());
		}

		private static String oneLine(String expr) {
			return expr.replaceAll("\\s+", " ").strip();
		}

	}

}
