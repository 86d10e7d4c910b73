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
		Map<String, Integer> operands = Map.of("TokengapClientItlP99High", 2, "TokengapStallRateHigh", 2,
				"TokengapSmoothGoodputLow", 2, "TokengapStreamFailuresHigh", 2, "TokengapTtftAboveEngine", 3,
				"TokengapEnginePreemptions", 1, "TokengapBackendScrapeDown", 1, "TokengapDown", 2,
				"TokengapRecordingErrors", 1);
		for (AlertRules.Alert alert : AlertRules.load()) {
			assertThat(PromQl.signals(alert.expr())).as(alert.name()).hasSize(operands.get(alert.name()))
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
	}

}
