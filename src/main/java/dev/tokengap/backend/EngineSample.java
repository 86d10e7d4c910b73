package dev.tokengap.backend;

/**
 * The engine's state at one scrape of its {@code /metrics}, summed over data-parallel
 * engines and API-server processes (KV usage: the fullest one). A quantity the engine
 * does not export is NaN, e.g. {@code swapped} on vLLM's V1 engine.
 *
 * @param nanos clock time ({@link dev.tokengap.timing.NanoClock}) when the scrape's body
 * had been read
 * @param running requests in the running batch ({@code vllm:num_requests_running})
 * @param waiting requests waiting to be scheduled ({@code vllm:num_requests_waiting})
 * @param swapped requests swapped out to CPU ({@code vllm:num_requests_swapped}, V0
 * engines only)
 * @param kvUsage KV-cache usage from 0 to 1 ({@code vllm:kv_cache_usage_perc} or
 * {@code vllm:gpu_cache_usage_perc})
 * @param preemptions preemptions since the engine started
 * ({@code vllm:num_preemptions_total})
 * @param promptTokens prefill tokens processed since the engine started
 * ({@code vllm:prompt_tokens_total})
 * @param generationTokens tokens generated since the engine started
 * ({@code vllm:generation_tokens_total})
 * @param waitingForCapacity the part of {@code waiting} that waits for scheduling
 * capacity ({@code vllm:num_requests_waiting_by_reason{reason="capacity"}}, vLLM since
 * 2026-04), not deferred for a LoRA budget, a KV transfer or a blocked status
 * @param promptTokensComputed prompt tokens the engine prefilled itself since it started
 * ({@code vllm:prompt_tokens_by_source_total{source="local_compute"}}, vLLM since
 * 2026-02): unlike {@code promptTokens}, without prefix-cache hits and KV transfers
 * @param prefillSeconds time finished requests spent in their prefill since the engine
 * started ({@code vllm:request_prefill_time_seconds_sum})
 * @param prefillRequests finished requests counted in {@code prefillSeconds}
 * ({@code vllm:request_prefill_time_seconds_count})
 * @param prefillComputedTokens prompt tokens those requests' prefills computed
 * ({@code vllm:request_prefill_kv_computed_tokens_sum})
 * @param finishedRequests requests finished since the engine started, as counted by the
 * per-request preemption histogram ({@code vllm:request_num_preemptions_count}, vLLM
 * since 2026-09)
 * @param finishedRequestPreemptions how often those requests had been preempted, in total
 * ({@code vllm:request_num_preemptions_sum})
 */
public record EngineSample(long nanos, double running, double waiting, double swapped, double kvUsage,
		double preemptions, double promptTokens, double generationTokens, double waitingForCapacity,
		double promptTokensComputed, double prefillSeconds, double prefillRequests, double prefillComputedTokens,
		double finishedRequests, double finishedRequestPreemptions) {

	/**
	 * A sample of an engine without the per-request preemption histogram.
	 * @param nanos see the record
	 * @param running see the record
	 * @param waiting see the record
	 * @param swapped see the record
	 * @param kvUsage see the record
	 * @param preemptions see the record
	 * @param promptTokens see the record
	 * @param generationTokens see the record
	 * @param waitingForCapacity see the record
	 * @param promptTokensComputed see the record
	 * @param prefillSeconds see the record
	 * @param prefillRequests see the record
	 * @param prefillComputedTokens see the record
	 */
	public EngineSample(long nanos, double running, double waiting, double swapped, double kvUsage, double preemptions,
			double promptTokens, double generationTokens, double waitingForCapacity, double promptTokensComputed,
			double prefillSeconds, double prefillRequests, double prefillComputedTokens) {
		this(nanos, running, waiting, swapped, kvUsage, preemptions, promptTokens, generationTokens, waitingForCapacity,
				promptTokensComputed, prefillSeconds, prefillRequests, prefillComputedTokens, Double.NaN, Double.NaN);
	}

	/**
	 * A sample of an engine without the prefill histograms.
	 * @param nanos see the record
	 * @param running see the record
	 * @param waiting see the record
	 * @param swapped see the record
	 * @param kvUsage see the record
	 * @param preemptions see the record
	 * @param promptTokens see the record
	 * @param generationTokens see the record
	 * @param waitingForCapacity see the record
	 * @param promptTokensComputed see the record
	 */
	public EngineSample(long nanos, double running, double waiting, double swapped, double kvUsage, double preemptions,
			double promptTokens, double generationTokens, double waitingForCapacity, double promptTokensComputed) {
		this(nanos, running, waiting, swapped, kvUsage, preemptions, promptTokens, generationTokens, waitingForCapacity,
				promptTokensComputed, Double.NaN, Double.NaN, Double.NaN);
	}

	/**
	 * A sample of an engine older than the by-reason and by-source families.
	 * @param nanos see the record
	 * @param running see the record
	 * @param waiting see the record
	 * @param swapped see the record
	 * @param kvUsage see the record
	 * @param preemptions see the record
	 * @param promptTokens see the record
	 * @param generationTokens see the record
	 */
	public EngineSample(long nanos, double running, double waiting, double swapped, double kvUsage, double preemptions,
			double promptTokens, double generationTokens) {
		this(nanos, running, waiting, swapped, kvUsage, preemptions, promptTokens, generationTokens, Double.NaN,
				Double.NaN);
	}

}
