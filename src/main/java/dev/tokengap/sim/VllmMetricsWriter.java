package dev.tokengap.sim;

/**
 * Writes the simulator's {@code /metrics} in Prometheus text format 0.0.4 the way vLLM
 * v1's {@code prometheus_client} does: HELP and TYPE lines, labels in sorted order
 * ({@code engine}, {@code finished_reason}, {@code le}, {@code model_name},
 * {@code reason}, {@code source}), {@code _created} gauges, every value as a Python
 * float. These are vLLM's names, not tokengap's, so no Micrometer.
 */
final class VllmMetricsWriter {

	static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

	private final String engineLabel = "engine=\"0\"";

	private final String modelLabel;

	VllmMetricsWriter(String model) {
		this.modelLabel = "model_name=\"" + escape(model) + "\"";
	}

	String write(VllmMetrics metrics, EngineGauges gauges) {
		StringBuilder out = new StringBuilder(16384);
		processStartTime(out, metrics);
		gauge(out, "vllm:num_requests_running", "Number of requests in model execution batches.", gauges.running());
		gauge(out, "vllm:num_requests_waiting", "Number of requests waiting to be processed.", gauges.waiting());
		waitingByReason(out, gauges);
		gauge(out, "vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", gauges.kvCacheUsage());
		counter(out, metrics, "vllm:prefix_cache_queries",
				"Prefix cache queries, in terms of number of queried tokens.", metrics.prefixCacheQueries.get());
		counter(out, metrics, "vllm:prefix_cache_hits", "Prefix cache hits, in terms of number of cached tokens.",
				metrics.prefixCacheHits.get());
		counter(out, metrics, "vllm:num_preemptions", "Cumulative number of preemption from the engine.",
				gauges.preemptions());
		counter(out, metrics, "vllm:prompt_tokens", "Number of prefill tokens processed.", metrics.promptTokens.get());
		promptTokensBySource(out, metrics);
		counter(out, metrics, "vllm:prompt_tokens_cached", "Number of cached prompt tokens (local + external).",
				metrics.promptTokensCached());
		counter(out, metrics, "vllm:generation_tokens", "Number of generation tokens processed.",
				metrics.generationTokens.get());
		requestSuccess(out, metrics);
		speculativeDecoding(out, metrics);
		histogram(out, metrics, "vllm:iteration_tokens_total", "Histogram of number of tokens per engine_step.",
				metrics.iterationTokens);
		histogram(out, metrics, "vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.",
				metrics.timeToFirstToken);
		histogram(out, metrics, "vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.",
				metrics.interTokenLatency);
		histogram(out, metrics, "vllm:request_time_per_output_token_seconds",
				"Histogram of time_per_output_token_seconds per request.", metrics.requestTimePerOutputToken);
		histogram(out, metrics, "vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.",
				metrics.e2eRequestLatency);
		histogram(out, metrics, "vllm:request_prompt_tokens", "Number of prefill tokens processed.",
				metrics.requestPromptTokens);
		histogram(out, metrics, "vllm:request_queue_time_seconds",
				"Histogram of time spent in WAITING phase for request.", metrics.requestQueueTime);
		histogram(out, metrics, "vllm:request_prefill_time_seconds",
				"Histogram of time spent in PREFILL phase for request.", metrics.requestPrefillTime);
		histogram(out, metrics, "vllm:request_prefill_kv_computed_tokens",
				"Histogram of new KV tokens computed during prefill (excluding cached tokens).",
				metrics.requestPrefillKvComputedTokens);
		histogram(out, metrics, "vllm:request_num_preemptions",
				"Histogram of the number of preemptions per finished request.", metrics.requestNumPreemptions);
		return out.toString();
	}

	/**
	 * prometheus_client's process collector, which vLLM's default registry carries: its
	 * start time tells one engine process from another (or from itself restarted) behind
	 * one URL.
	 */
	private static void processStartTime(StringBuilder out, VllmMetrics metrics) {
		header(out, "process_start_time_seconds", "Start time of the process since unix epoch in seconds.", "gauge");
		out.append("process_start_time_seconds ")
			.append(PythonFloats.goString(metrics.createdEpochSeconds))
			.append('\n');
	}

	private void gauge(StringBuilder out, String name, String help, double value) {
		header(out, name, help, "gauge");
		sample(out, name, "", value);
	}

	private void counter(StringBuilder out, VllmMetrics metrics, String base, String help, double value) {
		header(out, base + "_total", help, "counter");
		sample(out, base + "_total", "", value);
		created(out, metrics, base + "_created", help);
	}

	/**
	 * vLLM v1's speculative-decoding counters, which exist only on an engine that drafts.
	 */
	private void speculativeDecoding(StringBuilder out, VllmMetrics metrics) {
		if (metrics.speculativeTokens == 0) {
			return;
		}
		counter(out, metrics, "vllm:spec_decode_num_drafts", "Number of spec decoding drafts.",
				metrics.specDrafts.get());
		counter(out, metrics, "vllm:spec_decode_num_draft_tokens", "Number of draft tokens.",
				metrics.specDraftTokens.get());
		counter(out, metrics, "vllm:spec_decode_num_accepted_tokens", "Number of accepted tokens.",
				metrics.specAcceptedTokens.get());
		String name = "vllm:spec_decode_num_accepted_tokens_per_pos";
		String help = "Accepted tokens per draft position.";
		header(out, name + "_total", help, "counter");
		for (int position = 0; position < metrics.speculativeTokens; position++) {
			sample(out, name + "_total", "", position(position), metrics.specAcceptedPerPosition.get(position));
		}
		header(out, name + "_created", help, "gauge");
		for (int position = 0; position < metrics.speculativeTokens; position++) {
			sample(out, name + "_created", "", position(position), metrics.createdEpochSeconds);
		}
	}

	/** The {@code position} label, which sorts after {@code model_name}. */
	private static String position(int position) {
		return "position=\"" + position + "\"";
	}

	/**
	 * The simulator defers no request (no LoRA budget, KV transfer or blocked status), so
	 * its whole queue waits for capacity.
	 */
	private void waitingByReason(StringBuilder out, EngineGauges gauges) {
		String name = "vllm:num_requests_waiting_by_reason";
		header(out, name, "Number of waiting requests by reason. Reason labels: 'capacity' = waiting for "
				+ "scheduling capacity; 'deferred' = deferred by transient constraints (LoRA budget, KV transfer, "
				+ "blocked status). Sum of all reasons equals vllm:num_requests_waiting.", "gauge");
		sample(out, name, "", "reason=\"capacity\"", gauges.waiting());
		sample(out, name, "", "reason=\"deferred\"", 0);
	}

	private void promptTokensBySource(StringBuilder out, VllmMetrics metrics) {
		String help = "Number of prompt tokens by source.";
		header(out, "vllm:prompt_tokens_by_source_total", help, "counter");
		for (int i = 0; i < VllmMetrics.PROMPT_SOURCES.size(); i++) {
			sample(out, "vllm:prompt_tokens_by_source_total", "", source(i), metrics.promptTokensBySource.get(i));
		}
		header(out, "vllm:prompt_tokens_by_source_created", help, "gauge");
		for (int i = 0; i < VllmMetrics.PROMPT_SOURCES.size(); i++) {
			sample(out, "vllm:prompt_tokens_by_source_created", "", source(i), metrics.createdEpochSeconds);
		}
	}

	private static String source(int index) {
		return "source=\"" + VllmMetrics.PROMPT_SOURCES.get(index) + "\"";
	}

	private void requestSuccess(StringBuilder out, VllmMetrics metrics) {
		String help = "Count of successfully processed requests.";
		header(out, "vllm:request_success_total", help, "counter");
		for (int i = 0; i < VllmMetrics.FINISHED_REASONS.size(); i++) {
			String reason = "finished_reason=\"" + VllmMetrics.FINISHED_REASONS.get(i) + "\"";
			sample(out, "vllm:request_success_total", reason, metrics.requestSuccess.get(i));
		}
		header(out, "vllm:request_success_created", help, "gauge");
		for (String reason : VllmMetrics.FINISHED_REASONS) {
			sample(out, "vllm:request_success_created", "finished_reason=\"" + reason + "\"",
					metrics.createdEpochSeconds);
		}
	}

	private void histogram(StringBuilder out, VllmMetrics metrics, String name, String help, VllmHistogram histogram) {
		VllmHistogram.Snapshot snapshot = histogram.snapshot();
		header(out, name, help, "histogram");
		long[] counts = snapshot.cumulativeCounts();
		for (int i = 0; i < counts.length; i++) {
			double edge = (i < snapshot.edges().length) ? snapshot.edges()[i] : Double.POSITIVE_INFINITY;
			sample(out, name + "_bucket", "le=\"" + PythonFloats.goString(edge) + "\"", counts[i]);
		}
		sample(out, name + "_count", "", snapshot.count());
		sample(out, name + "_sum", "", snapshot.sum());
		created(out, metrics, name + "_created", help);
	}

	private void created(StringBuilder out, VllmMetrics metrics, String name, String help) {
		header(out, name, help, "gauge");
		sample(out, name, "", metrics.createdEpochSeconds);
	}

	private static void header(StringBuilder out, String name, String help, String type) {
		out.append("# HELP ").append(name).append(' ').append(help).append('\n');
		out.append("# TYPE ").append(name).append(' ').append(type).append('\n');
	}

	/**
	 * {@code extraLabel} sorts between {@code engine} and {@code model_name}, as
	 * {@code finished_reason} and {@code le} do.
	 */
	private void sample(StringBuilder out, String name, String extraLabel, double value) {
		sample(out, name, extraLabel, "", value);
	}

	/**
	 * {@code trailingLabel} sorts after {@code model_name}, as {@code reason} and
	 * {@code source} do.
	 */
	private void sample(StringBuilder out, String name, String extraLabel, String trailingLabel, double value) {
		out.append(name).append('{').append(this.engineLabel).append(',');
		if (!extraLabel.isEmpty()) {
			out.append(extraLabel).append(',');
		}
		out.append(this.modelLabel);
		if (!trailingLabel.isEmpty()) {
			out.append(',').append(trailingLabel);
		}
		out.append("} ").append(PythonFloats.goString(value)).append('\n');
	}

	private static String escape(String labelValue) {
		return labelValue.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
	}

	/** The engine's live state at the time of a scrape. */
	record EngineGauges(int running, int waiting, double kvCacheUsage, long preemptions) {

	}

}
