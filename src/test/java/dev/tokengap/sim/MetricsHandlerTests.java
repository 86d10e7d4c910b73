package dev.tokengap.sim;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

import dev.tokengap.testsupport.StreamingClient;

import static dev.tokengap.sim.FastSimulator.CHAT;
import static dev.tokengap.sim.FastSimulator.chatBody;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.offset;
import static org.awaitility.Awaitility.await;

class MetricsHandlerTests extends FreshSimulatorTests {

	private static final Pattern SAMPLE = Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)\\{([^}]*)\\} (\\S+)");

	private static final String MODEL_LABEL = "model_name=\"sim-llama-3-8b\"";

	@Test
	void everyLineIsHelpTypeOrASampleWithVllmsLabels() {
		StreamingClient.Exchange exchange = this.client.get("/metrics");
		assertThat(exchange.status()).isEqualTo(200);
		assertThat(exchange.headers().get("Content-Type")).isEqualTo("text/plain; version=0.0.4; charset=utf-8");
		assertThat(exchange.body()).endsWith("\n");
		for (String line : exchange.body().split("\n")) {
			if (line.startsWith("process_start_time_seconds ") || line.matches("# (HELP|TYPE) process_.+")) {
				continue;
			}
			if (line.startsWith("#")) {
				assertThat(line).matches("# (HELP|TYPE) vllm:[a-z0-9_]+ .+");
				continue;
			}
			Matcher sample = SAMPLE.matcher(line);
			assertThat(sample.matches()).as(line).isTrue();
			// Sorted as prometheus_client sorts them: reason and source after model_name.
			assertThat(sample.group(2)).startsWith("engine=\"0\",")
				.matches(".*" + Pattern.quote(MODEL_LABEL) + "(,(reason|source)=\"[a-z_]+\")?");
			Double.parseDouble(sample.group(3).replace("+Inf", "Infinity"));
		}
	}

	@Test
	void familiesMatchARealVllmV1ExpositionLineForLine() throws IOException {
		Map<String, List<String>> ours = families(this.client.get("/metrics").body());
		Map<String, List<String>> vllm = families(
				fixture().replace("meta-llama/Llama-3.1-8B-Instruct", "sim-llama-3-8b"));
		assertThat(ours.keySet()).contains("vllm:num_requests_running", "vllm:num_requests_waiting",
				"vllm:kv_cache_usage_perc", "vllm:num_preemptions_total", "vllm:prompt_tokens_total",
				"vllm:generation_tokens_total", "vllm:request_success_total", "vllm:time_to_first_token_seconds",
				"vllm:inter_token_latency_seconds", "vllm:e2e_request_latency_seconds",
				"vllm:request_time_per_output_token_seconds", "vllm:iteration_tokens_total",
				"vllm:num_requests_waiting_by_reason", "vllm:prompt_tokens_by_source_total",
				"vllm:prompt_tokens_by_source_created", "vllm:prompt_tokens_cached_total",
				"vllm:prefix_cache_queries_total", "vllm:prefix_cache_hits_total", "vllm:request_prompt_tokens",
				"vllm:request_queue_time_seconds", "vllm:request_prefill_time_seconds",
				"vllm:request_prefill_kv_computed_tokens");
		// The fixture leaves out prometheus_client's process collector
		// (see the next test), and predates the per-request preemption histogram
		// (its own test).
		ours.remove("process_start_time_seconds");
		ours.remove("vllm:request_num_preemptions");
		ours.remove("vllm:request_num_preemptions_created");
		ours.forEach((family, lines) -> assertThat(lines).as(family).isEqualTo(vllm.get(family)));
	}

	@Test
	void exportsItsStartTimeAsPrometheusClientsProcessCollectorDoes() {
		String body = this.client.get("/metrics").body();
		assertThat(body).startsWith("# HELP process_start_time_seconds Start time of the process since unix epoch in "
				+ "seconds.\n# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds ");
		String value = body.lines()
			.filter((line) -> line.startsWith("process_start_time_seconds "))
			.findFirst()
			.orElseThrow()
			.substring("process_start_time_seconds ".length());
		assertThat(value).matches("[0-9]\\.[0-9]+e\\+09");
		assertThat(Double.parseDouble(value)).isCloseTo(System.currentTimeMillis() / 1000.0, offset(60.0));
	}

	@Test
	void histogramsUseVllmV1EdgesWrittenAsPythonWritesThem() {
		Map<String, List<String>> edges = bucketEdges(this.client.get("/metrics").body());
		assertThat(edges.get("vllm:time_to_first_token_seconds")).containsExactly("0.001", "0.005", "0.01", "0.02",
				"0.04", "0.06", "0.08", "0.1", "0.25", "0.5", "0.75", "1.0", "2.5", "5.0", "7.5", "10.0", "20.0",
				"40.0", "80.0", "160.0", "640.0", "2560.0", "+Inf");
		List<String> itl = List.of("0.01", "0.025", "0.05", "0.075", "0.1", "0.15", "0.2", "0.3", "0.4", "0.5", "0.75",
				"1.0", "2.5", "5.0", "7.5", "10.0", "20.0", "40.0", "80.0", "+Inf");
		assertThat(edges.get("vllm:inter_token_latency_seconds")).isEqualTo(itl);
		assertThat(edges.get("vllm:request_time_per_output_token_seconds")).isEqualTo(itl);
		assertThat(edges.get("vllm:e2e_request_latency_seconds")).containsExactly("0.3", "0.5", "0.8", "1.0", "1.5",
				"2.0", "2.5", "5.0", "10.0", "15.0", "20.0", "30.0", "40.0", "50.0", "60.0", "120.0", "240.0", "480.0",
				"960.0", "1920.0", "7680.0", "+Inf");
		assertThat(edges.get("vllm:iteration_tokens_total")).containsExactly("1.0", "8.0", "16.0", "32.0", "64.0",
				"128.0", "256.0", "512.0", "1024.0", "2048.0", "4096.0", "8192.0", "16384.0", "+Inf");
		assertThat(edges.get("vllm:request_num_preemptions")).containsExactly("1.0", "2.0", "3.0", "4.0", "5.0", "10.0",
				"20.0", "+Inf");
	}

	@Test
	void aFinishedRequestIsCountedAsVllmCountsIt() {
		this.client.post(CHAT, chatBody("12345678", 5));
		Map<String, Double> values = values(this.client.get("/metrics").body());
		assertThat(values.get("vllm:generation_tokens_total")).isEqualTo(5.0);
		assertThat(values.get("vllm:prompt_tokens_total")).isEqualTo(2.0);
		assertThat(values.get("vllm:prompt_tokens_by_source_total{source=\"local_compute\"}")).isEqualTo(2.0);
		assertThat(values.get("vllm:prompt_tokens_by_source_total{source=\"local_cache_hit\"}")).isZero();
		assertThat(values.get("vllm:prompt_tokens_by_source_total{source=\"external_kv_transfer\"}")).isZero();
		assertThat(values.get("vllm:prompt_tokens_cached_total")).isZero();
		assertThat(values.get("vllm:request_success_total{finished_reason=\"length\"}")).isEqualTo(1.0);
		assertThat(values.get("vllm:time_to_first_token_seconds_count")).isEqualTo(1.0);
		assertThat(values.get("vllm:inter_token_latency_seconds_count")).isEqualTo(4.0);
		assertThat(values.get("vllm:request_time_per_output_token_seconds_count")).isEqualTo(1.0);
		assertThat(values.get("vllm:e2e_request_latency_seconds_count")).isEqualTo(1.0);
		assertThat(values.get("vllm:inter_token_latency_seconds_sum")).isGreaterThan(4 * 0.003);
		assertThat(values.get("vllm:iteration_tokens_total_count")).isEqualTo(5.0);
	}

	@Test
	void aRepeatedPromptCountsItsCachedTokensBySourceAndInTheTotal() {
		for (int i = 0; i < 2; i++) {
			this.client.post(CHAT, chatBody("y".repeat(400), 2, false, ""));
		}
		Map<String, Double> values = values(this.client.get("/metrics").body());
		assertThat(values.get("vllm:prompt_tokens_total")).as("cache hits count too").isEqualTo(200.0);
		assertThat(values.get("vllm:prompt_tokens_by_source_total{source=\"local_compute\"}")).isEqualTo(104.0);
		assertThat(values.get("vllm:prompt_tokens_by_source_total{source=\"local_cache_hit\"}")).isEqualTo(96.0);
		assertThat(values.get("vllm:prompt_tokens_by_source_total{source=\"external_kv_transfer\"}")).isZero();
		assertThat(values.get("vllm:prompt_tokens_cached_total")).isEqualTo(96.0);
		assertThat(values.get("vllm:prefix_cache_queries_total")).isEqualTo(200.0);
		assertThat(values.get("vllm:prefix_cache_hits_total")).isEqualTo(96.0);
	}

	@Test
	void theWholeQueueWaitsForCapacity() {
		try (SimulatorServer single = FastSimulator.start(FastSimulator.properties().maxNumSeqs(1).build())) {
			StreamingClient client = FastSimulator.client(single);
			List<Disposable> streams = List.of(client.stream(CHAT, chatBody("one", 1000), Map.of()).subscribe(),
					client.stream(CHAT, chatBody("two", 1000), Map.of()).subscribe(),
					client.stream(CHAT, chatBody("three", 1000), Map.of()).subscribe());
			await().atMost(Duration.ofSeconds(5)).until(() -> single.engine().waiting() == 2);
			Map<String, Double> values = values(client.get("/metrics").body());
			assertThat(values.get("vllm:num_requests_waiting")).isEqualTo(2.0);
			assertThat(values.get("vllm:num_requests_waiting_by_reason{reason=\"capacity\"}")).isEqualTo(2.0);
			assertThat(values.get("vllm:num_requests_waiting_by_reason{reason=\"deferred\"}")).isZero();
			streams.forEach(Disposable::dispose);
		}
	}

	@Test
	void anAbortedRequestStaysOutOfTheLatencyHistogramsAndTheSuccessCounts() {
		this.client.stream(CHAT, chatBody("hi", 500), Map.of()).take(5).blockLast(Duration.ofSeconds(10));
		await().atMost(Duration.ofSeconds(2)).until(() -> this.server.engine().running() == 0);
		Map<String, Double> values = values(this.client.get("/metrics").body());
		for (String reason : VllmMetrics.FINISHED_REASONS) {
			assertThat(values.get("vllm:request_success_total{finished_reason=\"" + reason + "\"}")).as(reason)
				.isZero();
		}
		assertThat(values.get("vllm:time_to_first_token_seconds_count")).isZero();
		assertThat(values.get("vllm:inter_token_latency_seconds_count")).isZero();
		assertThat(values.get("vllm:e2e_request_latency_seconds_count")).isZero();
		assertThat(values.get("vllm:generation_tokens_total")).isGreaterThanOrEqualTo(4.0);
	}

	@Test
	void gaugesFollowTheEngineDuringAStream() {
		Disposable stream = this.client.stream(CHAT, chatBody("x".repeat(400), 300), Map.of()).subscribe();
		try {
			await().atMost(Duration.ofSeconds(5)).until(() -> this.server.engine().steps() > 2);
			Map<String, Double> values = values(this.client.get("/metrics").body());
			assertThat(values.get("vllm:num_requests_running")).isEqualTo(1.0);
			assertThat(values.get("vllm:num_requests_waiting")).isZero();
			// 100 prompt tokens and some generated ones, in blocks of 16
			assertThat(values.get("vllm:kv_cache_usage_perc")).isBetween(7.0 / 4096, 25.0 / 4096);
		}
		finally {
			stream.dispose();
		}
	}

	@Test
	void metricsFaultsDelayOrFailOnlyTheMetricsAnswer() {
		assertThat(this.client.post("/sim/faults", "{\"metricsDelayMs\":400}").status()).isEqualTo(200);
		long start = System.nanoTime();
		CompletableFuture<StreamingClient.Exchange> metrics = CompletableFuture
			.supplyAsync(() -> this.client.get("/metrics"));
		assertThat(this.client.get("/health").status()).isEqualTo(200);
		assertThat(System.nanoTime() - start).as("health is not held up")
			.isLessThan(TimeUnit.MILLISECONDS.toNanos(300));
		assertThat(metrics.join().status()).isEqualTo(200);
		assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(400));
		this.client.post("/sim/faults", "{\"metricsStatus\":500}");
		assertThat(this.client.get("/metrics").status()).isEqualTo(500);
		assertThat(this.client.delete("/sim/faults").status()).isEqualTo(200);
		assertThat(this.client.get("/metrics").status()).isEqualTo(200);
	}

	@Test
	void metricsDelayPropertyDelaysTheAnswer() {
		try (SimulatorServer slow = FastSimulator
			.start(FastSimulator.properties().metricsDelay(Duration.ofMillis(300)).build())) {
			long start = System.nanoTime();
			assertThat(FastSimulator.client(slow).get("/metrics").status()).isEqualTo(200);
			assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(300));
		}
	}

	/**
	 * Family name -> its HELP and TYPE lines and its series (sample name and labels,
	 * value left out).
	 */
	private static Map<String, List<String>> families(String exposition) {
		Map<String, List<String>> families = new LinkedHashMap<>();
		List<String> current = null;
		for (String line : exposition.split("\n")) {
			if (line.startsWith("# HELP ")) {
				current = new ArrayList<>();
				families.put(line.split(" ")[2], current);
			}
			if (current != null && !line.isBlank()) {
				current.add(line.startsWith("#") ? line : line.substring(0, line.lastIndexOf(' ')));
			}
		}
		return families;
	}

	private static Map<String, List<String>> bucketEdges(String exposition) {
		Map<String, List<String>> edges = new LinkedHashMap<>();
		Pattern le = Pattern.compile("le=\"([^\"]+)\"");
		for (String line : exposition.split("\n")) {
			Matcher sample = SAMPLE.matcher(line);
			if (sample.matches() && sample.group(1).endsWith("_bucket")) {
				Matcher edge = le.matcher(sample.group(2));
				assertThat(edge.find()).isTrue();
				String family = sample.group(1).substring(0, sample.group(1).length() - "_bucket".length());
				edges.computeIfAbsent(family, (name) -> new ArrayList<>()).add(edge.group(1));
			}
		}
		return edges;
	}

	/** Sample name (with labels other than engine and model_name) -> value. */
	private static Map<String, Double> values(String exposition) {
		Map<String, Double> values = new LinkedHashMap<>();
		for (String line : exposition.split("\n")) {
			Matcher sample = SAMPLE.matcher(line);
			if (sample.matches()) {
				String labels = sample.group(2).replace("engine=\"0\"", "").replace(MODEL_LABEL, "").replace(",", "");
				String key = sample.group(1) + (labels.isEmpty() ? "" : "{" + labels + "}");
				values.put(key, Double.parseDouble(sample.group(3).replace("+Inf", "Infinity")));
			}
		}
		return values;
	}

	private static String fixture() throws IOException {
		try (InputStream in = MetricsHandlerTests.class.getResourceAsStream("/fixtures/vllm-metrics/v1-full.txt")) {
			return new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
	}

}
