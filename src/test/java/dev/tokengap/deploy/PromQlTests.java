package dev.tokengap.deploy;

import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The PromQL helpers the dashboard, rule and Prometheus tests rely on.
 */
class PromQlTests {

	@Test
	void signalsOfAComparisonAreItsDifference() {
		assertThat(PromQl.signals("tokengap_backend_up == 0")).containsExactly("(tokengap_backend_up) - (0)");
		assertThat(PromQl.signals("sum by (a) (rate(x_total[5m])) / sum by (a) (rate(y_total[5m])) > 0.01"))
			.containsExactly("(sum by (a) (rate(x_total[5m])) / sum by (a) (rate(y_total[5m]))) - (0.01)");
	}

	@Test
	void signalsSplitTopLevelSetOperatorsAndUnwrapAbsent() {
		assertThat(PromQl.signals("up{job=\"tokengap\"} == 0\nor\nabsent(up{job=\"tokengap\"})"))
			.containsExactly("(up{job=\"tokengap\"}) - (0)", "up{job=\"tokengap\"}");
		assertThat(PromQl.signals("(a - b) > 0.5\nand\na > 2 * b\nand\nsum by (m) (rate(c[5m])) > 0.1"))
			.containsExactly("(a - b) - (0.5)", "(a) - (2 * b)", "(sum by (m) (rate(c[5m]))) - (0.1)");
	}

	@Test
	void operatorsInsideSelectorsStringsAndCallsAreNotTopLevel() {
		assertThat(PromQl.signals("x{a=~\"b|c>d\", order=\"and\"} > 1"))
			.containsExactly("(x{a=~\"b|c>d\", order=\"and\"}) - (1)");
		assertThat(PromQl.signals("max(a > 1 and b)")).containsExactly("max(a > 1 and b)");
	}

	@Test
	void everyRuleHasOneSignalPerOperand() {
		Map<String, Integer> operands = Map.ofEntries(Map.entry("TokengapClientItlP99High", 2),
				Map.entry("TokengapStallRateHigh", 2), Map.entry("TokengapSmoothGoodputLow", 2),
				Map.entry("TokengapStreamFailuresHigh", 2), Map.entry("TokengapStreamP99GapHigh", 2),
				Map.entry("TokengapTtftP99High", 2), Map.entry("TokengapTtftAboveEngine", 3),
				Map.entry("TokengapEnginePreemptions", 1), Map.entry("TokengapEngineSuccessRateLow", 2),
				Map.entry("TokengapEngineStuck", 1), Map.entry("TokengapBackendScrapeDown", 2),
				Map.entry("TokengapBackendNotReady", 1), Map.entry("TokengapDown", 1), Map.entry("TokengapAllDown", 1),
				Map.entry("TokengapRecordingErrors", 1), Map.entry("TokengapEnginePoolSaturated", 1));
		for (AlertRules.Alert alert : AlertRules.load()) {
			assertThat(PromQl.signals(alert.expr())).as(alert.name())
				.hasSize(operands.get(alert.name()))
				.allSatisfy((signal) -> assertThat(signal).doesNotContain(" > ", " < ", " == ", " and", " or "));
		}
	}

	@Test
	void seriesAreTheTokengapVllmAndUpNames() {
		assertThat(PromQl.series("sum(rate(tokengap_stalls_total{model_name=~\"$model_name\"}[1m])) / "
				+ "histogram_quantile(0.99, sum by (le) (rate(vllm:inter_token_latency_seconds_bucket[5m]))) "
				+ "or absent(up{job=\"tokengap\"}) or group_left tokengap_backend_up"))
			.containsExactly("tokengap_stalls_total", "vllm:inter_token_latency_seconds_bucket", "up",
					"tokengap_backend_up");
	}

	@Test
	void recordedSeriesAreTheLevelMetricOperationsNamesAndNotContractSeries() {
		String expr = "cluster_namespace_model:tokengap_inter_token_latency_seconds:p99_rate5m{cluster=~\"$cluster\"} > 0.25"
				+ " and cluster_model:vllm_time_to_first_token_seconds:p99_rate5m or tokengap_backend_up";
		assertThat(PromQl.recorded(expr)).containsExactly(
				"cluster_namespace_model:tokengap_inter_token_latency_seconds:p99_rate5m",
				"cluster_model:vllm_time_to_first_token_seconds:p99_rate5m");
		assertThat(PromQl.series(expr)).containsExactly("tokengap_backend_up");
		assertThat(PromQl.recordedSelectors(expr)).containsExactly(Map
			.entry("cluster_namespace_model:tokengap_inter_token_latency_seconds:p99_rate5m", "cluster=~\"$cluster\""));
		assertThat(AlertRules.withoutComments("a > 0.25 # threshold\nand\nb > 1")).isEqualTo("a > 0.25\nand\nb > 1");
	}

	@Test
	void addsAMatcherToASelectorWithOrWithoutBraces() {
		assertThat(PromQl.withMatcher("tokengap_requests_total", "model_name", "m"))
			.isEqualTo("tokengap_requests_total{model_name=\"m\"}");
		assertThat(PromQl.withMatcher("tokengap_requests_total{}", "endpoint", "messages"))
			.isEqualTo("tokengap_requests_total{endpoint=\"messages\"}");
		assertThat(PromQl.withMatcher("tokengap_requests_total{namespace=~\"demo\"}", "pod", "a\"b"))
			.isEqualTo("tokengap_requests_total{namespace=~\"demo\", pod=\"a\\\"b\"}");
	}

	@Test
	void substitutesGrafanaVariablesInBothSyntaxes() {
		assertThat(PromQl.substitute("x{a=~\"$ns\", b=~\"${pod}\"}[$__rate_interval]",
				Map.of("ns", "demo", "pod", "p-1", "__rate_interval", "1m")))
			.isEqualTo("x{a=~\"demo\", b=~\"p-1\"}[1m]");
		assertThatIllegalArgumentException().isThrownBy(() -> PromQl.substitute("$nope", Map.of()));
		assertThat(PromQl.substitute("label_replace(x{a=~\"$ns\"}, \"m\", \"$1\", \"e\", \"(.+)\")", Map.of("ns", "n")))
			.as("label_replace's $1 is no variable")
			.isEqualTo("label_replace(x{a=~\"n\"}, \"m\", \"$1\", \"e\", \"(.+)\")");
	}

}
