package dev.tokengap.backend;

/**
 * The engine's state at one scrape of its {@code /metrics}, summed over data-parallel engines
 * and API-server processes (KV usage: the fullest one). A quantity the engine does not export is
 * NaN, e.g. {@code swapped} on vLLM's V1 engine.
 *
 * @param nanos clock time ({@link dev.tokengap.timing.NanoClock}) when the scrape's body had
 * been read
 * @param running requests in the running batch ({@code vllm:num_requests_running})
 * @param waiting requests waiting to be scheduled ({@code vllm:num_requests_waiting})
 * @param swapped requests swapped out to CPU ({@code vllm:num_requests_swapped}, V0 engines only)
 * @param kvUsage KV-cache usage from 0 to 1 ({@code vllm:kv_cache_usage_perc} or
 * {@code vllm:gpu_cache_usage_perc})
 * @param preemptions preemptions since the engine started ({@code vllm:num_preemptions_total})
 * @param promptTokens prefill tokens processed since the engine started
 * ({@code vllm:prompt_tokens_total})
 * @param generationTokens tokens generated since the engine started
 * ({@code vllm:generation_tokens_total})
 */
public record EngineSample(long nanos, double running, double waiting, double swapped, double kvUsage,
		double preemptions, double promptTokens, double generationTokens) {

}
