package dev.tokengap.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import dev.tokengap.testsupport.ProjectFiles;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.within;

/**
 * Option parsing, SLO semantics and the percentile definition.
 */
class BenchOptionsTests {

	@Test
	void parsesVllmBenchServeStyleOptions() {
		BenchOptions o = BenchOptions.parse("--base-url", "http://127.0.0.1:8080/", "--endpoint", "completions",
				"--num-prompts", "50", "--request-rate", "inf", "--max-concurrency=8", "--input-len", "10:20",
				"--output-len", "32", "--seed", "7", "--goodput", "ttft:500", "tpot:50", "--stall-threshold", "250");
		assertThat(o.baseUrl()).hasToString("http://127.0.0.1:8080");
		assertThat(o.path()).isEqualTo("/v1/completions");
		assertThat(o.numPrompts()).isEqualTo(50);
		assertThat(o.requestRate()).isInfinite();
		assertThat(o.maxConcurrency()).isEqualTo(8);
		assertThat(o.inputLen()).isEqualTo(new BenchOptions.LengthRange(10, 20));
		assertThat(o.outputLen()).isEqualTo(new BenchOptions.LengthRange(32, 32));
		assertThat(o.goodput()).isEqualTo(new Slo(500, 50, Double.NaN, Double.NaN));
		assertThat(o.stallThresholdMs()).isEqualTo(250);
	}

	@Test
	void eachEndpointHasItsPathAndTokengapsLabel() {
		BenchOptions chat = BenchOptions.parse("--base-url", "http://x");
		assertThat(chat.endpoint()).isEqualTo("chat");
		assertThat(chat.path()).isEqualTo("/v1/chat/completions");
		assertThat(chat.endpointLabel()).isEqualTo("chat_completions");
		BenchOptions completions = BenchOptions.parse("--base-url", "http://x", "--endpoint", "/v1/completions");
		assertThat(completions.path()).isEqualTo("/v1/completions");
		assertThat(completions.endpointLabel()).isEqualTo("completions");
		BenchOptions responses = BenchOptions.parse("--base-url", "http://x", "--endpoint=responses");
		assertThat(responses.path()).isEqualTo("/v1/responses");
		assertThat(responses.endpointLabel()).isEqualTo("responses");
		assertThat(BenchOptions.parse("--base-url", "http://x", "--endpoint", "/v1/responses").endpoint())
			.isEqualTo("responses");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> BenchOptions.parse("--base-url", "http://x", "--endpoint", "messages"))
			.withMessageContaining("chat, completions or responses");
	}

	@Test
	void aResponsesRequestAsksForMaxOutputTokensOfItsInput() {
		assertThat(RequestPlan.body("responses", "m", "the cat ", 32))
			.isEqualTo("{\"model\":\"m\",\"input\":\"the cat \",\"max_output_tokens\":32,\"stream\":true}");
		assertThat(RequestPlan.body("chat", "m", "the cat ", 32)).contains("\"max_tokens\":32", "\"ignore_eos\":true",
				"\"messages\":[{\"role\":\"user\",\"content\":\"the cat \"}]");
	}

	@Test
	void rejectsWhatVllmWouldReject() {
		assertThatIllegalArgumentException().isThrownBy(() -> BenchOptions.parse("--num-prompts", "5"))
			.withMessageContaining("--base-url");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> BenchOptions.parse("--base-url", "http://x", "--goodput", "ttfb:5"))
			.withMessageContaining("ttft, tpot, e2el and maxgap");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> BenchOptions.parse("--base-url", "http://x", "--input-len", "20:10"));
		assertThatIllegalArgumentException()
			.isThrownBy(() -> BenchOptions.parse("--base-url", "http://x", "--request-rate", "0"));
		assertThatIllegalArgumentException().isThrownBy(() -> BenchOptions.parse("--base-url", "http://x", "--nope"));
	}

	@Test
	void aRequestIsGoodWhenItMeetsEveryGivenSlo() {
		Slo slo = new Slo(100, 20, Double.NaN, Double.NaN);
		assertThat(slo.met(100, 20, 1e9, 1e9)).isTrue();
		assertThat(slo.met(100.1, 10, 0, 0)).isFalse();
		assertThat(slo.met(50, 20.1, 0, 0)).isFalse();
		// one output token: no TPOT, which vLLM counts as 0
		assertThat(slo.met(50, Double.NaN, 0, 0)).isTrue();
		assertThat(Slo.NONE.met(1e9, 1e9, 1e9, 1e9)).isTrue();
		assertThat(Slo.NONE.isSet()).isFalse();
		Slo noGapOver400 = Slo.parse(java.util.List.of("maxgap:400"));
		assertThat(noGapOver400.isSet()).isTrue();
		assertThat(noGapOver400.met(1e9, 1e9, 1e9, 400)).isTrue();
		assertThat(noGapOver400.met(0, 0, 0, 400.5)).isFalse();
		assertThat(noGapOver400).hasToString("maxgap:400.00");
	}

	@Test
	void percentilesInterpolateAsNumpyDoes() {
		// numpy.percentile([1, 2, 3, 4], [50, 90, 99]) = 2.5, 3.7, 3.97
		Distribution d = Distribution.of(new double[] { 4, 1, 3, 2 });
		assertThat(d.p50()).isCloseTo(2.5, within(1e-12));
		assertThat(d.p90()).isCloseTo(3.7, within(1e-12));
		assertThat(d.p99()).isCloseTo(3.97, within(1e-12));
		assertThat(d.mean()).isCloseTo(2.5, within(1e-12));
		assertThat(Distribution.of(new double[0]).p50()).isNaN();
	}

	@Test
	void everyOptionOfTheUsageIsInTheReadme() {
		String readme = ProjectFiles.read("README.md");
		Matcher option = Pattern.compile("--[a-z][a-z-]+").matcher(BenchOptions.USAGE + CompareCommand.USAGE);
		List<String> options = new ArrayList<>();
		while (option.find()) {
			options.add(option.group());
		}
		assertThat(options).contains("--warmup", "--dataset", "--dataset-order", "--header", "--gate", "--out")
			.allSatisfy((name) -> assertThat(readme).as("README names %s", name).contains("`" + name));
	}

}
