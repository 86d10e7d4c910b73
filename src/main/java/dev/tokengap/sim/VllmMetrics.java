package dev.tokengap.sim;

import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The engine-side statistics vLLM v1 exports, measured where vLLM measures them: from
 * arrival in the engine to outputs, per step, with no HTTP in the interval. Aborted
 * requests reach no latency histogram and no {@code request_success_total} series, so
 * their samples are held per request and recorded only when the request finishes.
 */
final class VllmMetrics {

	static final double[] TTFT_EDGES = { 0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5,
			5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0 };

	static final double[] ITL_EDGES = { 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0,
			7.5, 10.0, 20.0, 40.0, 80.0 };

	static final double[] REQUEST_EDGES = { 0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0,
			60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0 };

	/**
	 * vLLM's token-count edges (1, 2, 5 per decade) up to the simulator's default
	 * max-model-len.
	 */
	static final double[] TOKEN_COUNT_EDGES = { 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000 };

	/**
	 * vLLM's edges for {@code vllm:request_num_preemptions} (its PR #49984; the Rust
	 * frontend's PR #57033 uses the same).
	 */
	static final double[] PREEMPTION_COUNT_EDGES = { 1, 2, 3, 4, 5, 10, 20 };

	static final double[] ITERATION_TOKEN_EDGES = { 1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384 };

	/** vLLM's finished_reason values, in its order. */
	static final List<String> FINISHED_REASONS = List.of("stop", "length", "abort", "error", "repetition");

	static final int LENGTH = 1;

	/** vLLM's prompt token sources, in its order. */
	static final List<String> PROMPT_SOURCES = List.of("local_compute", "local_cache_hit", "external_kv_transfer");

	static final int LOCAL_COMPUTE = 0;

	static final int LOCAL_CACHE_HIT = 1;

	static final int EXTERNAL_KV_TRANSFER = 2;

	final double createdEpochSeconds;

	final AtomicLong promptTokens = new AtomicLong();

	/**
	 * Prompt tokens by source, counted as {@link #promptTokens} is: at the first token.
	 */
	final AtomicLongArray promptTokensBySource = new AtomicLongArray(PROMPT_SOURCES.size());

	/**
	 * Tokens looked up in the prefix cache, at every admission (after preemption too).
	 */
	final AtomicLong prefixCacheQueries = new AtomicLong();

	final AtomicLong prefixCacheHits = new AtomicLong();

	final AtomicLong generationTokens = new AtomicLong();

	final AtomicLongArray requestSuccess = new AtomicLongArray(FINISHED_REASONS.size());

	final VllmHistogram iterationTokens = new VllmHistogram(ITERATION_TOKEN_EDGES);

	final VllmHistogram timeToFirstToken = new VllmHistogram(TTFT_EDGES);

	final VllmHistogram interTokenLatency = new VllmHistogram(ITL_EDGES);

	final VllmHistogram requestTimePerOutputToken = new VllmHistogram(ITL_EDGES);

	final VllmHistogram e2eRequestLatency = new VllmHistogram(REQUEST_EDGES);

	final VllmHistogram requestPromptTokens = new VllmHistogram(TOKEN_COUNT_EDGES);

	final VllmHistogram requestQueueTime = new VllmHistogram(REQUEST_EDGES);

	/** First scheduled to first token: the request's prefill step(s). */
	final VllmHistogram requestPrefillTime = new VllmHistogram(REQUEST_EDGES);

	/** Prompt tokens the prefill computed (its prefix-cache hits excluded). */
	final VllmHistogram requestPrefillKvComputedTokens = new VllmHistogram(TOKEN_COUNT_EDGES);

	/** Times each finished request was preempted, 0 included. */
	final VllmHistogram requestNumPreemptions = new VllmHistogram(PREEMPTION_COUNT_EDGES);

	/**
	 * Draft tokens per decode step; 0 without speculative decoding (then no spec_decode
	 * series).
	 */
	final int speculativeTokens;

	final AtomicLong specDrafts = new AtomicLong();

	final AtomicLong specDraftTokens = new AtomicLong();

	final AtomicLong specAcceptedTokens = new AtomicLong();

	/**
	 * Accepted tokens by draft position (0-based), as vLLM's {@code ..._per_pos_total}.
	 */
	final AtomicLongArray specAcceptedPerPosition;

	VllmMetrics() {
		this(0);
	}

	VllmMetrics(int speculativeTokens) {
		Instant now = Instant.now();
		this.createdEpochSeconds = now.getEpochSecond() + now.getNano() / 1e9;
		this.speculativeTokens = speculativeTokens;
		this.specAcceptedPerPosition = new AtomicLongArray(Math.max(speculativeTokens, 1));
	}

	/**
	 * One decode step of one request that proposed {@link #speculativeTokens} drafts and
	 * accepted the first {@code accepted} of them.
	 */
	void drafted(int accepted) {
		this.specDrafts.incrementAndGet();
		this.specDraftTokens.addAndGet(this.speculativeTokens);
		this.specAcceptedTokens.addAndGet(accepted);
		for (int position = 0; position < accepted; position++) {
			this.specAcceptedPerPosition.incrementAndGet(position);
		}
	}

	void stepCompleted(int scheduledTokens) {
		this.iterationTokens.observe(scheduledTokens);
	}

	void tokenProduced(SimSequence sequence, boolean first) {
		this.generationTokens.incrementAndGet();
		if (first) {
			int cached = Math.max(0, sequence.cachedPromptTokens);
			this.promptTokens.addAndGet(sequence.promptTokens);
			this.promptTokensBySource.addAndGet(LOCAL_COMPUTE, sequence.promptTokens - cached);
			this.promptTokensBySource.addAndGet(LOCAL_CACHE_HIT, cached);
		}
	}

	void prefixCacheQueried(int tokens, int hits) {
		this.prefixCacheQueries.addAndGet(tokens);
		this.prefixCacheHits.addAndGet(hits);
	}

	/** {@code vllm:prompt_tokens_cached_total}: local and external cache hits. */
	long promptTokensCached() {
		return this.promptTokensBySource.get(LOCAL_CACHE_HIT) + this.promptTokensBySource.get(EXTERNAL_KV_TRANSFER);
	}

	void finished(SimSequence sequence) {
		this.requestSuccess.incrementAndGet(LENGTH);
		this.timeToFirstToken.observe(seconds(sequence.firstTokenNanos - sequence.arrivalNanos));
		for (double latency : sequence.interTokenLatencies()) {
			this.interTokenLatency.observe(latency);
		}
		if (sequence.generated > 1) {
			double decode = seconds(sequence.lastTokenNanos - sequence.firstTokenNanos);
			this.requestTimePerOutputToken.observe(decode / (sequence.generated - 1));
		}
		this.e2eRequestLatency.observe(seconds(sequence.lastTokenNanos - sequence.arrivalNanos));
		this.requestPromptTokens.observe(sequence.promptTokens);
		this.requestQueueTime.observe(seconds(Math.max(0, sequence.firstScheduledNanos - sequence.arrivalNanos)));
		this.requestPrefillTime.observe(seconds(Math.max(0, sequence.firstTokenNanos - sequence.firstScheduledNanos)));
		this.requestPrefillKvComputedTokens.observe(sequence.promptTokens - Math.max(0, sequence.cachedPromptTokens));
		this.requestNumPreemptions.observe(sequence.preemptions);
	}

	static double seconds(long nanos) {
		return nanos / 1e9;
	}

}
