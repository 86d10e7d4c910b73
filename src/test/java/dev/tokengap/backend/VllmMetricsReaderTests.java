package dev.tokengap.backend;

import java.util.Arrays;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import dev.tokengap.metrics.BucketEdges;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

class VllmMetricsReaderTests {

	private static final double NaN = Double.NaN;

	private static final String MODEL = "model_name=\"meta-llama/Llama-3.1-8B-Instruct\"";

	private static final String V0 = MetricsFixtures.V0;

	/** Counters written without the _total suffix, as some releases did. */
	private static final String BARE_COUNTERS = """
			vllm:num_requests_running{%1$s} 1.0
			vllm:num_preemptions{%1$s} 4.0
			vllm:prompt_tokens{%1$s} 10.0
			vllm:generation_tokens{%1$s} 20.0
			vllm:prompt_tokens_by_source{%1$s,source="local_compute"} 7.0
			vllm:prompt_tokens_by_source{%1$s,source="local_cache_hit"} 3.0
			""".formatted(MODEL);

	/** Two data-parallel engines (V1 names), one nearly full. */
	private static final String DATA_PARALLEL = """
			vllm:num_requests_running{engine="0",%1$s} 8.0
			vllm:num_requests_running{engine="1",%1$s} 6.0
			vllm:num_requests_waiting{engine="0",%1$s} 0.0
			vllm:num_requests_waiting{engine="1",%1$s} 4.0
			vllm:num_requests_waiting_by_reason{engine="1",%1$s,reason="capacity"} 4.0
			vllm:kv_cache_usage_perc{engine="0",%1$s} 0.35
			vllm:kv_cache_usage_perc{engine="1",%1$s} 0.93
			vllm:num_preemptions_total{engine="0",%1$s} 1.0
			vllm:num_preemptions_total{engine="1",%1$s} 11.0
			vllm:num_preemptions_created{engine="0",%1$s} 1.7769301736866438e+09
			vllm:num_preemptions_created{engine="1",%1$s} 1.7769301736866438e+09
			vllm:prompt_tokens_total{engine="0",%1$s} 5000.0
			vllm:prompt_tokens_total{engine="1",%1$s} 7000.0
			vllm:prompt_tokens_by_source_total{engine="0",%1$s,source="local_compute"} 5000.0
			vllm:prompt_tokens_cached_total{engine="0",%1$s} 100.0
			vllm:generation_tokens_total{engine="0",%1$s} 300.0
			vllm:generation_tokens_total{engine="1",%1$s} 400.0
			""".formatted(MODEL);

	/** Several API server processes, each writing the gauges under its own pid. */
	private static final String MULTI_PROCESS = """
			vllm:num_requests_running{engine="0",%1$s,pid="273"} 3.0
			vllm:num_requests_running{engine="0",%1$s,pid="275"} 0.0
			vllm:num_requests_running{engine="0",%1$s,pid="277"} 2.0
			vllm:num_requests_waiting{engine="0",%1$s,pid="273"} 1.0
			vllm:num_requests_waiting{engine="0",%1$s,pid="275"} 1.0
			vllm:num_requests_waiting_by_reason{engine="0",%1$s,pid="273",reason="capacity"} 1.0
			vllm:num_requests_waiting_by_reason{engine="0",%1$s,pid="273",reason="deferred"} 0.0
			vllm:num_requests_waiting_by_reason{engine="0",%1$s,pid="275",reason="capacity"} 0.0
			vllm:num_requests_waiting_by_reason{engine="0",%1$s,pid="275",reason="deferred"} 1.0
			vllm:kv_cache_usage_perc{engine="0",%1$s,pid="277"} 0.0
			vllm:kv_cache_usage_perc{engine="0",%1$s,pid="275"} 0.0
			vllm:kv_cache_usage_perc{engine="0",%1$s,pid="273"} 0.6530455880475035
			""".formatted(MODEL);

	/**
	 * A full KV cache whose whole queue is deferred (LoRA budget, KV transfer), and whose
	 * prompts all came from the prefix cache.
	 */
	private static final String ONLY_DEFERRED = """
			vllm:num_requests_running{engine="0",%1$s} 2.0
			vllm:num_requests_waiting{engine="0",%1$s} 3.0
			vllm:num_requests_waiting_by_reason{engine="0",%1$s,reason="capacity"} 0.0
			vllm:num_requests_waiting_by_reason{engine="0",%1$s,reason="deferred"} 3.0
			vllm:kv_cache_usage_perc{engine="0",%1$s} 0.97
			vllm:prompt_tokens_total{engine="0",%1$s} 900.0
			vllm:prompt_tokens_by_source_total{engine="0",%1$s,source="local_compute"} 0.0
			vllm:prompt_tokens_by_source_total{engine="0",%1$s,source="local_cache_hit"} 900.0
			vllm:prompt_tokens_by_source_created{engine="0",%1$s,source="local_compute"} 1.7769301736866863e+09
			""".formatted(MODEL);

	/** An engine between 0.10 and 0.11 writing both KV names. */
	private static final String BOTH_KV_NAMES = """
			vllm:gpu_cache_usage_perc{engine="0",%1$s} 0.5
			vllm:kv_cache_usage_perc{engine="0",%1$s} 0.25
			vllm:num_preemptions_total{engine="0",%1$s} 3.0
			vllm:num_preemptions{engine="0",%1$s} 99.0
			""".formatted(MODEL);

	private final VllmMetricsReader reader = new VllmMetricsReader();

	static Stream<Arguments> expositions() {
		return Stream.of(
				arguments("v1-full.txt (idle V1 engine)", MetricsFixtures.exposition(MetricsFixtures.V1_FULL),
						new double[] { 0, 0, NaN, 0, 0, 0, 0, 0, 0 }),
				arguments("v1-busy-prefix-cache.txt (deferred requests, prefix-cache hits, KV transfers)",
						MetricsFixtures.exposition(MetricsFixtures.V1_BUSY),
						new double[] { 6, 5, NaN, 0.9318181818181818, 2, 12000, 2350, 3, 4000 }),
				arguments("v1-before-2026.txt (no by-reason or by-source families)",
						MetricsFixtures.exposition(MetricsFixtures.V1_BEFORE_2026),
						new double[] { 0, 0, NaN, 0, 0, 0, 0, NaN, NaN }),
				arguments("design-doc excerpt", MetricsFixtures.exposition(MetricsFixtures.DESIGN_DOC_EXCERPT),
						new double[] { 8, NaN, NaN, NaN, NaN, NaN, 27453, NaN, NaN }),
				arguments("pid excerpt", MetricsFixtures.exposition(MetricsFixtures.PID_EXCERPT),
						new double[] { NaN, NaN, NaN, 0.6530455880475035, NaN, NaN, NaN, NaN, NaN }),
				arguments("V0 engine", V0, new double[] { 5, 3, 2, 0.42, 7, 1000, 2000, NaN, NaN }),
				arguments("counters without _total", BARE_COUNTERS,
						new double[] { 1, NaN, NaN, NaN, 4, 10, 20, NaN, 7 }),
				arguments("data-parallel engines", DATA_PARALLEL,
						new double[] { 14, 4, NaN, 0.93, 12, 12000, 700, 4, 5000 }),
				arguments("OpenMetrics data-parallel engines",
						"# TYPE vllm:num_preemptions counter\n" + DATA_PARALLEL + "# EOF\n",
						new double[] { 14, 4, NaN, 0.93, 12, 12000, 700, 4, 5000 }),
				arguments("API server processes", MULTI_PROCESS,
						new double[] { 5, 2, NaN, 0.6530455880475035, NaN, NaN, NaN, 1, NaN }),
				arguments("only deferred requests waiting", ONLY_DEFERRED,
						new double[] { 2, 3, NaN, 0.97, NaN, 900, NaN, 0, 0 }),
				arguments("both KV names and both preemption names", BOTH_KV_NAMES,
						new double[] { NaN, NaN, NaN, 0.25, 3, NaN, NaN, NaN, NaN }),
				arguments("CRLF V0 engine", V0.replace("\n", "\r\n"),
						new double[] { 5, 3, 2, 0.42, 7, 1000, 2000, NaN, NaN }),
				arguments("NaN gauge", "vllm:kv_cache_usage_perc{engine=\"0\"} NaN\nvllm:num_requests_running 1\n",
						new double[] { 1, NaN, NaN, NaN, NaN, NaN, NaN, NaN, NaN }));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("expositions")
	void readsTheEngineState(String description, String text, double[] expected) {
		EngineSample sample = this.reader.read(text, 123_456_789L);
		assertThat(sample).isNotNull();
		assertThat(sample.nanos()).isEqualTo(123_456_789L);
		double[] actual = { sample.running(), sample.waiting(), sample.swapped(), sample.kvUsage(),
				sample.preemptions(), sample.promptTokens(), sample.generationTokens(), sample.waitingForCapacity(),
				sample.promptTokensComputed() };
		assertThat(Arrays.toString(actual)).isEqualTo(Arrays.toString(expected));
	}

	@ParameterizedTest
	@ValueSource(strings = { "", "\n", "<html><body>502 Bad Gateway</body></html>",
			"# HELP python_gc_objects_collected_total Objects collected during gc\n"
					+ "python_gc_objects_collected_total{generation=\"0\"} 1234.0\nprocess_open_fds 42.0\n",
			"vllm:num_requests_running_created 1.0\nvllm:request_success_total{finished_reason=\"stop\"} 1.0\n" })
	void findsNoStateInTextWithoutVllmStateMetrics(String text) {
		assertThat(this.reader.read(text, 1)).isNull();
	}

	/**
	 * The per-request preemption histogram (vLLM since 2026-09), as prometheus_client
	 * writes it for two data-parallel engines: its count and sum are summed, its buckets
	 * are not state.
	 */
	private static final String REQUEST_PREEMPTIONS = """
			# HELP vllm:request_num_preemptions Histogram of the number of preemptions per finished request.
			# TYPE vllm:request_num_preemptions histogram
			vllm:request_num_preemptions_bucket{engine="0",le="1.0",%1$s} 5.0
			vllm:request_num_preemptions_bucket{engine="0",le="2.0",%1$s} 6.0
			vllm:request_num_preemptions_bucket{engine="0",le="3.0",%1$s} 6.0
			vllm:request_num_preemptions_bucket{engine="0",le="4.0",%1$s} 6.0
			vllm:request_num_preemptions_bucket{engine="0",le="5.0",%1$s} 6.0
			vllm:request_num_preemptions_bucket{engine="0",le="10.0",%1$s} 7.0
			vllm:request_num_preemptions_bucket{engine="0",le="20.0",%1$s} 7.0
			vllm:request_num_preemptions_bucket{engine="0",le="+Inf",%1$s} 7.0
			vllm:request_num_preemptions_count{engine="0",%1$s} 7.0
			vllm:request_num_preemptions_sum{engine="0",%1$s} 9.0
			vllm:request_num_preemptions_count{engine="1",%1$s} 3.0
			vllm:request_num_preemptions_sum{engine="1",%1$s} 0.0
			# HELP vllm:request_num_preemptions_created Histogram of the number of preemptions per finished request.
			# TYPE vllm:request_num_preemptions_created gauge
			vllm:request_num_preemptions_created{engine="0",%1$s} 1.7769301736866438e+09
			vllm:num_requests_running{engine="0",%1$s} 2.0
			""".formatted(MODEL);

	@Test
	void readsThePerRequestPreemptionHistogramsCountAndSum() {
		EngineSample sample = this.reader.read(REQUEST_PREEMPTIONS, 1);
		assertThat(sample.finishedRequests()).isEqualTo(10);
		assertThat(sample.finishedRequestPreemptions()).isEqualTo(9);
		assertThat(sample.running()).isEqualTo(2);
	}

	@Test
	void anEngineWithoutThePerRequestPreemptionHistogramHasNone() {
		EngineSample sample = this.reader.read(MetricsFixtures.exposition(MetricsFixtures.V1_FULL), 1);
		assertThat(sample.finishedRequests()).isNaN();
		assertThat(sample.finishedRequestPreemptions()).isNaN();
	}

	@Test
	void forgetsThePreviousExpositionBetweenReads() {
		this.reader.read(DATA_PARALLEL, 1);
		EngineSample sample = this.reader.read(BARE_COUNTERS, 2);
		assertThat(sample.running()).isEqualTo(1.0);
		assertThat(sample.kvUsage()).isNaN();
	}

	@Test
	void readsTheV1EdgesFromTheFullFixture() {
		assertThat(this.reader.readEdges(MetricsFixtures.exposition(MetricsFixtures.V1_FULL)))
			.isEqualTo(BucketEdges.VLLM_V1);
	}

	@Test
	void readsTimePerOutputTokenEdgesWhenThereIsNoInterTokenLatency() {
		String text = histogram("vllm:time_to_first_token_seconds", MODEL, BucketEdges.VLLM_V0.ttft())
				+ histogram("vllm:time_per_output_token_seconds", MODEL, BucketEdges.VLLM_V0.itl())
				+ histogram("vllm:e2e_request_latency_seconds", MODEL, BucketEdges.VLLM_V0.request());
		assertThat(this.reader.readEdges(text)).isEqualTo(BucketEdges.VLLM_V0);
	}

	@Test
	void prefersInterTokenLatencyEdgesOverTimePerOutputToken() {
		double[] custom = { 0.005, 0.5, 50.0 };
		String text = histogram("vllm:time_to_first_token_seconds", MODEL, custom)
				+ histogram("vllm:time_per_output_token_seconds", MODEL, BucketEdges.VLLM_V0.itl())
				+ histogram("vllm:inter_token_latency_seconds", MODEL, custom)
				+ histogram("vllm:e2e_request_latency_seconds", MODEL, custom);
		assertThat(this.reader.readEdges(text)).isEqualTo(new BucketEdges(custom, custom, custom));
	}

	@Test
	void takesTheEdgesOfTheFirstSeriesSortedAndDistinct() {
		double[] shuffled = { 2.5, 0.1, 1.0, 0.1, 0.25 };
		double[] other = { 0.3, 0.7 };
		String first = "engine=\"0\"," + MODEL;
		String second = "engine=\"1\"," + MODEL;
		String text = histogram("vllm:time_to_first_token_seconds", first, shuffled)
				+ histogram("vllm:time_to_first_token_seconds", second, other)
				+ histogram("vllm:inter_token_latency_seconds", second, other)
				+ histogram("vllm:inter_token_latency_seconds", first, shuffled)
				+ histogram("vllm:e2e_request_latency_seconds", first, shuffled);
		double[] expected = { 0.1, 0.25, 1.0, 2.5 };
		assertThat(this.reader.readEdges(text)).isEqualTo(new BucketEdges(expected, other, expected));
	}

	@Test
	void findsNoEdgesWhenAFamilyIsMissing() {
		assertThat(this.reader.readEdges(MetricsFixtures.exposition(MetricsFixtures.DESIGN_DOC_EXCERPT))).isNull();
		assertThat(this.reader.readEdges(V0)).isNull();
		assertThat(this.reader.readEdges("")).isNull();
	}

	@Test
	void findsNoEdgesWhenTheyCannotBeMirrored() {
		double[] withZero = { 0.0, 1.0 };
		String text = histogram("vllm:time_to_first_token_seconds", MODEL, withZero)
				+ histogram("vllm:inter_token_latency_seconds", MODEL, withZero)
				+ histogram("vllm:e2e_request_latency_seconds", MODEL, withZero);
		assertThat(this.reader.readEdges(text)).isNull();
	}

	@Test
	void countsMalformedLines() {
		this.reader.read(MetricsFixtures.raw(MetricsFixtures.DESIGN_DOC_EXCERPT), 1);
		assertThat(this.reader.malformedLines()).isEqualTo(3);
	}

	@Test
	void identifiesTheEngineByProcessStartTimeEngineLabelsAndModel() {
		String text = "# HELP process_start_time_seconds Start time of the process since unix epoch in seconds.\n"
				+ "# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds 1.77693016063e+09\n"
				+ MetricsFixtures.exposition(MetricsFixtures.V1_FULL);
		this.reader.read(text, 1);
		assertThat(this.reader.identity())
			.isEqualTo(new EngineIdentity(1.77693016063e9, "0", "meta-llama/Llama-3.1-8B-Instruct"));
	}

	@Test
	void withoutAProcessStartTimeTheCountersCreationTimeStandsInForIt() {
		this.reader.read(MetricsFixtures.exposition(MetricsFixtures.V1_FULL), 1);
		assertThat(this.reader.identity())
			.isEqualTo(new EngineIdentity(1.7769301736866438e9, "0", "meta-llama/Llama-3.1-8B-Instruct"));
		this.reader.read(DATA_PARALLEL, 2);
		assertThat(this.reader.identity().engines()).isEqualTo("0,1");
	}

	@Test
	void anEngineWithNeitherHasAnUnknownStart() {
		this.reader.read(BARE_COUNTERS, 1);
		assertThat(this.reader.identity().startTime()).isNaN();
		assertThat(this.reader.identity().engines()).isEmpty();
		assertThat(this.reader.identity().models()).isEqualTo("meta-llama/Llama-3.1-8B-Instruct");
	}

	/**
	 * A histogram as prometheus_client writes it: buckets in the given order, then +Inf,
	 * count, sum.
	 */
	private static String histogram(String name, String labels, double[] edges) {
		String buckets = Arrays.stream(edges)
			.mapToObj((edge) -> name + "_bucket{le=\"" + edge + "\"," + labels + "} 0.0\n")
			.collect(Collectors.joining());
		return "# HELP " + name + " A histogram.\n# TYPE " + name + " histogram\n" + buckets + name
				+ "_bucket{le=\"+Inf\"," + labels + "} 0.0\n" + name + "_count{" + labels + "} 0.0\n" + name + "_sum{"
				+ labels + "} 0.0\n";
	}

}
