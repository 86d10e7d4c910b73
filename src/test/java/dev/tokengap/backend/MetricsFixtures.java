package dev.tokengap.backend;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.stream.Collectors;

/**
 * The vLLM {@code /metrics} fixtures under {@code fixtures/vllm-metrics/}.
 */
final class MetricsFixtures {

	static final String V1_FULL = "v1-full.txt";

	/**
	 * {@link #V1_FULL} of a busy engine: deferred requests, prefix-cache hits, KV
	 * transfers.
	 */
	static final String V1_BUSY = "v1-busy-prefix-cache.txt";

	/**
	 * {@link #V1_FULL} without the families added in 2026 (by reason, by source, cached).
	 */
	static final String V1_BEFORE_2026 = "v1-before-2026.txt";

	static final String DESIGN_DOC_EXCERPT = "v1-design-doc-excerpt.txt";

	static final String PID_EXCERPT = "v1-multiprocess-pid-excerpt.txt";

	/**
	 * vLLM 0.6.x: V0 engine, model_name only, KV as gpu_cache_usage_perc, swapped
	 * requests.
	 */
	static final String V0 = """
			# HELP vllm:num_requests_running Number of requests currently running on GPU.
			# TYPE vllm:num_requests_running gauge
			vllm:num_requests_running{%1$s} 5.0
			# HELP vllm:num_requests_swapped Number of requests swapped to CPU.
			# TYPE vllm:num_requests_swapped gauge
			vllm:num_requests_swapped{%1$s} 2.0
			# HELP vllm:num_requests_waiting Number of requests waiting to be processed.
			# TYPE vllm:num_requests_waiting gauge
			vllm:num_requests_waiting{%1$s} 3.0
			# HELP vllm:gpu_cache_usage_perc GPU KV-cache usage. 1 means 100 percent usage.
			# TYPE vllm:gpu_cache_usage_perc gauge
			vllm:gpu_cache_usage_perc{%1$s} 0.42
			# HELP vllm:cpu_cache_usage_perc CPU KV-cache usage. 1 means 100 percent usage.
			# TYPE vllm:cpu_cache_usage_perc gauge
			vllm:cpu_cache_usage_perc{%1$s} 0.99
			# HELP vllm:num_preemptions_total Cumulative number of preemption from the engine.
			# TYPE vllm:num_preemptions_total counter
			vllm:num_preemptions_total{%1$s} 7.0
			# HELP vllm:num_preemptions_created Cumulative number of preemption from the engine.
			# TYPE vllm:num_preemptions_created gauge
			vllm:num_preemptions_created{%1$s} 1.7e+09
			# HELP vllm:prompt_tokens_total Number of prefill tokens processed.
			# TYPE vllm:prompt_tokens_total counter
			vllm:prompt_tokens_total{%1$s} 1000.0
			# HELP vllm:prompt_tokens_created Number of prefill tokens processed.
			# TYPE vllm:prompt_tokens_created gauge
			vllm:prompt_tokens_created{%1$s} 1.7e+09
			# HELP vllm:generation_tokens_total Number of generation tokens processed.
			# TYPE vllm:generation_tokens_total counter
			vllm:generation_tokens_total{%1$s} 2000.0
			vllm:generation_tokens_created{%1$s} 1.7e+09
			vllm:request_success_total{finished_reason="stop",%1$s} 9.0
			""".formatted("model_name=\"meta-llama/Llama-3.1-8B-Instruct\"");

	private MetricsFixtures() {
	}

	/**
	 * A fixture as an exposition: the design-doc excerpt's {@code ...} elision lines (not
	 * part of any exposition, see the fixtures' README) removed.
	 */
	static String exposition(String name) {
		String text = raw(name);
		if (!text.lines().anyMatch("..."::equals)) {
			return text;
		}
		return text.lines().filter((line) -> !line.equals("...")).collect(Collectors.joining("\n", "", "\n"));
	}

	static String raw(String name) {
		try (InputStream in = MetricsFixtures.class.getResourceAsStream("/fixtures/vllm-metrics/" + name)) {
			if (in == null) {
				throw new IllegalArgumentException("No fixture " + name);
			}
			return new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
