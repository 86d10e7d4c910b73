package dev.tokengap.proxy;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.tokengap.testsupport.PrometheusText;
import dev.tokengap.testsupport.Promtool;
import dev.tokengap.testsupport.ScriptedUpstreamTests;
import dev.tokengap.testsupport.StreamingClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Clients choose the {@code model} string: 10,000 distinct values over HTTP leave at most
 * {@code tokengap.metrics.max-models} {@code model_name} values (plus {@code other} and
 * {@code unknown}), and model names full of quotes, backslashes, newlines, braces and
 * unicode never break the exposition (checked by the real {@code promtool} and parsed
 * back).
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=0", "tokengap.mode=demo", "tokengap.metrics.max-models=8" })
class ModelLabelCardinalityIntegrationTests extends ScriptedUpstreamTests {

	static final int MAX_MODELS = 8;

	/**
	 * Configured, so admitted as labels: the worst an operator (or a served model list)
	 * could let in.
	 */
	static final List<String> HOSTILE = List.of("q\"uote", "back\\slash\\", "new\nline", "brace}{,=\"x\"",
			"unicode-模型-😀-\u00e9", "tab\tand\rcarriage", "# HELP fake", "a\\\"b\\n");

	static final List<String> CONFIGURED = Stream
		.concat(HOSTILE.stream(), IntStream.range(0, 20).mapToObj((i) -> "configured-" + i))
		.toList();

	@DynamicPropertySource
	static void configuredModels(DynamicPropertyRegistry registry) {
		for (int i = 0; i < CONFIGURED.size(); i++) {
			String name = CONFIGURED.get(i);
			registry.add("tokengap.metrics.models[" + i + "]", () -> name);
		}
	}

	@Test
	void tenThousandDistinctModelsLeaveAtMostMaxModelsLabelValues() throws Exception {
		upstream.respond(200, "application/json", "{}");
		// The hostile names first, one at a time, so that they are the ones admitted.
		assertThat(post(HOSTILE, 1)).isEqualTo(HOSTILE.size());
		List<String> rest = Stream
			.concat(CONFIGURED.stream().skip(HOSTILE.size()), IntStream.range(0, 10_000).mapToObj((i) -> "m-" + i))
			.toList();
		assertThat(post(rest, 32)).isEqualTo(rest.size());
		int total = HOSTILE.size() + rest.size();
		PrometheusText metrics = PrometheusText.scrape(this.managementPort);
		Set<String> labels = new TreeSet<>();
		metrics.samples()
			.stream()
			.filter((s) -> s.name().startsWith("tokengap_") && s.labels().containsKey("model_name"))
			.forEach((s) -> labels.add(s.labels().get("model_name")));
		assertThat(labels).contains("other").hasSizeLessThanOrEqualTo(MAX_MODELS + 2);
		assertThat(labels).containsAll(HOSTILE);
		assertThat(metrics.value("tokengap_requests_total")).isEqualTo(total);
		assertThat(metrics.value("tokengap_requests_total", "model_name", "other")).isEqualTo(total - MAX_MODELS);
		Promtool.Result check = Promtool.runWithInput(metrics.text(), "check", "metrics");
		assertThat(check.exit()).as("promtool check metrics said:%n%s", check.output()).isIn(0, 3);
		assertThat(check.output().lines().filter((line) -> line.contains("tokengap_"))).isEmpty();
	}

	/**
	 * POSTs one chat request per model, {@code concurrency} at a time; returns the 200s.
	 */
	private long post(List<String> models, int concurrency) {
		StreamingClient client = StreamingClient.at("http://127.0.0.1:" + this.port);
		Scheduler senders = Schedulers.newBoundedElastic(concurrency, Integer.MAX_VALUE, "cardinality");
		try {
			return Flux.fromIterable(models)
				.flatMap(
						(model) -> Mono
							.fromCallable(() -> client
								.post("/v1/chat/completions",
										StreamingClient.JSON.writeValueAsString(Map.of("model", model)))
								.whole()
								.status())
							.subscribeOn(senders),
						concurrency)
				.filter((status) -> status == 200)
				.count()
				.block(Duration.ofMinutes(3));
		}
		finally {
			senders.dispose();
		}
	}

}
