package dev.tokengap.sim;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

/**
 * Settings of the built-in vLLM simulator ({@code tokengap.sim.*}): the engine's batching
 * limits, its KV cache and the cost model that turns a scheduled step into wall-clock
 * time.
 *
 * @param port port of the standalone simulator
 * @param model the one model name served, as vLLM's {@code --served-model-name}
 * @param seed seed of the token texts
 * @param maxNumSeqs cap on running sequences, as vLLM's {@code --max-num-seqs}
 * @param maxNumBatchedTokens token budget of one step, as vLLM's
 * {@code --max-num-batched-tokens}
 * @param chunkedPrefill whether a prefill may be split across steps
 * @param blockSize tokens per KV block
 * @param numKvBlocks KV blocks in the pool
 * @param stepFixedCost time of a step regardless of its content
 * @param stepCostPerSeq extra time per sequence in the step
 * @param stepCostPerPrefillToken extra time per prefill token in the step
 * @param defaultMaxTokens output tokens when a request gives no max_tokens
 * @param maxModelLen limit of prompt plus output tokens
 * @param metricsDelay delay before /metrics answers
 * @param charsPerToken characters of request text per prompt token
 * @param traceCapacity token trace entries kept (the oldest are dropped)
 * @param reasoningShare fraction (0..1) of each request's max tokens that its stream
 * opens with as reasoning: chat's {@code delta.reasoning}, a responses reasoning item, a
 * messages {@code thinking} block (a request's {@code X-Sim-Reasoning-Tokens} header
 * overrides it)
 * @param maxNumQueuedReqs waiting requests at most before new ones are refused with 503,
 * as vLLM's {@code --max-num-queued-reqs}; 0 admits everything (vLLM's default)
 * @param prefixCaching whether a prompt's full blocks already computed for an earlier
 * prompt with the same text prefix are reused instead of prefilled, as vLLM v1's
 * automatic prefix caching (on by default there too)
 * @param aliases further served names of the model, as vLLM's
 * {@code --served-model-name model
 * alias...}: listed by {@code /v1/models} with the model's {@code root}, served like it;
 * the engine's own series keep the first name
 * @param loraAdapters LoRA adapters, as vLLM's {@code --lora-modules name=path}: listed
 * by {@code /v1/models} with {@code parent} the model, served like it (the simulator has
 * no weights to adapt)
 * @param numSpeculativeTokens draft tokens proposed per decode step, as vLLM's
 * {@code --speculative-config num_speculative_tokens}; 0 (the default) decodes one token
 * a step. With drafts, each decode step emits its accepted drafts plus one token in one
 * output (one SSE event carrying several tokens, as vLLM's) and the
 * {@code vllm:spec_decode_*} counters exist
 * @param specAcceptanceRate chance that each draft token is accepted, given the ones
 * before it were (a draft is accepted up to its first rejection)
 * @param perRequestMetrics whether responses carry vLLM's per-request {@code metrics}
 * object, as vLLM's {@code --enable-per-request-metrics} (PR #46768): TTFT, generation
 * (decode) time, queue time, mean ITL and tokens per second of the request, from the
 * engine's own timestamps (an {@code X-Sim-Stall} held in the HTTP layer is not in them);
 * on the final usage chunk of a chat or completions stream, in {@code response.completed}
 * of a responses stream, at the top of a whole body; suppressed for {@code n > 1} or
 * several prompts ({@code "metrics":null}, a stream's usage chunk drops it as vLLM's does
 * its nulls), left out for a request with {@code "include_metrics": false}. Off (the
 * default), no response has the key, as a vLLM without the feature
 * @param otlpTracesEndpoint an OTLP/HTTP traces endpoint
 * ({@code http://collector:4318/v1/traces}), as vLLM's {@code --otlp-traces-endpoint}:
 * each finished request is exported as an {@code llm_request} span, child of its
 * {@code traceparent}, with vLLM's {@code gen_ai.latency.*} and usage attributes; unset
 * (the default), nothing is traced
 */
@ConfigurationProperties("tokengap.sim")
public record SimulatorProperties(@DefaultValue("8000") int port, @DefaultValue("sim-llama-3-8b") String model,
		@DefaultValue("42") long seed, @DefaultValue("64") int maxNumSeqs,
		@DefaultValue("2048") int maxNumBatchedTokens, @DefaultValue("true") boolean chunkedPrefill,
		@DefaultValue("16") int blockSize, @DefaultValue("4096") int numKvBlocks,
		@DefaultValue("20ms") Duration stepFixedCost, @DefaultValue("250us") Duration stepCostPerSeq,
		@DefaultValue("20us") Duration stepCostPerPrefillToken, @DefaultValue("128") int defaultMaxTokens,
		@DefaultValue("8192") int maxModelLen, @DefaultValue("0ms") Duration metricsDelay,
		@DefaultValue("4") int charsPerToken, @DefaultValue("100000") int traceCapacity,
		@DefaultValue("0") double reasoningShare, @DefaultValue("0") int maxNumQueuedReqs,
		@DefaultValue("true") boolean prefixCaching, @DefaultValue List<String> aliases,
		@DefaultValue List<String> loraAdapters, @DefaultValue("0") int numSpeculativeTokens,
		@DefaultValue("0.7") double specAcceptanceRate, @DefaultValue("false") boolean perRequestMetrics,
		URI otlpTracesEndpoint) {

	/**
	 * Refuses values no engine runs with, naming every one of them at once, whether
	 * Spring binds the properties or code builds them.
	 */
	public SimulatorProperties {
		aliases = (aliases != null) ? List.copyOf(aliases) : List.of();
		loraAdapters = (loraAdapters != null) ? List.copyOf(loraAdapters) : List.of();
		List<String> problems = new ArrayList<>();
		if (port < 0 || port > 65535) {
			problems.add("port must be between 0 and 65535, got " + port);
		}
		if (model == null || model.isBlank()) {
			problems.add("model must not be blank");
		}
		requirePositive(problems, "max-num-seqs", maxNumSeqs);
		requirePositive(problems, "max-num-batched-tokens", maxNumBatchedTokens);
		requirePositive(problems, "block-size", blockSize);
		requirePositive(problems, "num-kv-blocks", numKvBlocks);
		requirePositive(problems, "default-max-tokens", defaultMaxTokens);
		requirePositive(problems, "max-model-len", maxModelLen);
		requirePositive(problems, "chars-per-token", charsPerToken);
		requirePositive(problems, "trace-capacity", traceCapacity);
		requireNotNegative(problems, "max-num-queued-reqs", maxNumQueuedReqs);
		if (stepFixedCost == null || stepFixedCost.isNegative() || stepFixedCost.isZero()) {
			problems.add("step-fixed-cost must be positive, got " + stepFixedCost);
		}
		requireNotNegative(problems, "step-cost-per-seq", stepCostPerSeq);
		requireNotNegative(problems, "step-cost-per-prefill-token", stepCostPerPrefillToken);
		requireNotNegative(problems, "metrics-delay", metricsDelay);
		requireFraction(problems, "reasoning-share", reasoningShare);
		if (numSpeculativeTokens < 0 || numSpeculativeTokens > 16) {
			problems.add("num-speculative-tokens must be between 0 and 16, got " + numSpeculativeTokens);
		}
		requireFraction(problems, "spec-acceptance-rate", specAcceptanceRate);
		if (!problems.isEmpty()) {
			throw new IllegalArgumentException("tokengap.sim: " + String.join("; ", problems));
		}
	}

	/**
	 * Whether a request's {@code model} names this engine: the model, an alias or an
	 * adapter.
	 * @param name the requested model
	 * @return whether it is served
	 */
	boolean serves(String name) {
		return this.model.equals(name) || this.aliases.contains(name) || this.loraAdapters.contains(name);
	}

	/**
	 * The defaults, bound from the {@code @DefaultValue} literals so they live in one
	 * place.
	 * @return properties as an empty environment gives them
	 */
	public static SimulatorProperties defaults() {
		Binder binder = new Binder(new MapConfigurationPropertySource());
		return binder.bindOrCreate("tokengap.sim", Bindable.of(SimulatorProperties.class));
	}

	/**
	 * Fails fast on a KV cache the engine cannot run with: like vLLM, refuses one too
	 * small for one max-length sequence. Checked when an engine starts, not when the
	 * properties are bound: a proxy that runs no simulator does not care.
	 */
	void requireUsable() {
		long kvTokens = (long) this.numKvBlocks * this.blockSize;
		if (kvTokens < this.maxModelLen) {
			throw new IllegalArgumentException("tokengap.sim: a KV cache of " + kvTokens
					+ " tokens (num-kv-blocks x block-size) cannot hold one sequence of max-model-len "
					+ this.maxModelLen);
		}
	}

	private static void requirePositive(List<String> problems, String name, int value) {
		if (value <= 0) {
			problems.add(name + " must be positive, got " + value);
		}
	}

	private static void requireNotNegative(List<String> problems, String name, int value) {
		if (value < 0) {
			problems.add(name + " must not be negative, got " + value);
		}
	}

	private static void requireNotNegative(List<String> problems, String name, Duration value) {
		if (value == null || value.isNegative()) {
			problems.add(name + " must not be negative, got " + value);
		}
	}

	private static void requireFraction(List<String> problems, String name, double value) {
		if (!(value >= 0 && value <= 1)) {
			problems.add(name + " must be between 0 and 1, got " + value);
		}
	}

	/**
	 * A builder that starts from these values, for tests and demos that change a few of
	 * them.
	 * @return a builder holding a copy of these properties
	 */
	public Builder toBuilder() {
		return new Builder(this);
	}

	/**
	 * Builds modified copies of {@link SimulatorProperties}.
	 */
	public static final class Builder {

		private int port;

		private String model;

		private long seed;

		private int maxNumSeqs;

		private int maxNumBatchedTokens;

		private boolean chunkedPrefill;

		private int blockSize;

		private int numKvBlocks;

		private Duration stepFixedCost;

		private Duration stepCostPerSeq;

		private Duration stepCostPerPrefillToken;

		private int defaultMaxTokens;

		private int maxModelLen;

		private Duration metricsDelay;

		private int charsPerToken;

		private int traceCapacity;

		private double reasoningShare;

		private int maxNumQueuedReqs;

		private boolean prefixCaching;

		private List<String> aliases;

		private List<String> loraAdapters;

		private int numSpeculativeTokens;

		private double specAcceptanceRate;

		private boolean perRequestMetrics;

		private URI otlpTracesEndpoint;

		private Builder(SimulatorProperties p) {
			this.port = p.port;
			this.model = p.model;
			this.seed = p.seed;
			this.maxNumSeqs = p.maxNumSeqs;
			this.maxNumBatchedTokens = p.maxNumBatchedTokens;
			this.chunkedPrefill = p.chunkedPrefill;
			this.blockSize = p.blockSize;
			this.numKvBlocks = p.numKvBlocks;
			this.stepFixedCost = p.stepFixedCost;
			this.stepCostPerSeq = p.stepCostPerSeq;
			this.stepCostPerPrefillToken = p.stepCostPerPrefillToken;
			this.defaultMaxTokens = p.defaultMaxTokens;
			this.maxModelLen = p.maxModelLen;
			this.metricsDelay = p.metricsDelay;
			this.charsPerToken = p.charsPerToken;
			this.traceCapacity = p.traceCapacity;
			this.reasoningShare = p.reasoningShare;
			this.maxNumQueuedReqs = p.maxNumQueuedReqs;
			this.prefixCaching = p.prefixCaching;
			this.aliases = p.aliases;
			this.loraAdapters = p.loraAdapters;
			this.numSpeculativeTokens = p.numSpeculativeTokens;
			this.specAcceptanceRate = p.specAcceptanceRate;
			this.perRequestMetrics = p.perRequestMetrics;
			this.otlpTracesEndpoint = p.otlpTracesEndpoint;
		}

		public Builder port(int port) {
			this.port = port;
			return this;
		}

		public Builder model(String model) {
			this.model = model;
			return this;
		}

		public Builder seed(long seed) {
			this.seed = seed;
			return this;
		}

		public Builder maxNumSeqs(int maxNumSeqs) {
			this.maxNumSeqs = maxNumSeqs;
			return this;
		}

		public Builder maxNumBatchedTokens(int maxNumBatchedTokens) {
			this.maxNumBatchedTokens = maxNumBatchedTokens;
			return this;
		}

		public Builder chunkedPrefill(boolean chunkedPrefill) {
			this.chunkedPrefill = chunkedPrefill;
			return this;
		}

		public Builder blockSize(int blockSize) {
			this.blockSize = blockSize;
			return this;
		}

		public Builder numKvBlocks(int numKvBlocks) {
			this.numKvBlocks = numKvBlocks;
			return this;
		}

		public Builder stepFixedCost(Duration stepFixedCost) {
			this.stepFixedCost = stepFixedCost;
			return this;
		}

		public Builder stepCostPerSeq(Duration stepCostPerSeq) {
			this.stepCostPerSeq = stepCostPerSeq;
			return this;
		}

		public Builder stepCostPerPrefillToken(Duration stepCostPerPrefillToken) {
			this.stepCostPerPrefillToken = stepCostPerPrefillToken;
			return this;
		}

		public Builder defaultMaxTokens(int defaultMaxTokens) {
			this.defaultMaxTokens = defaultMaxTokens;
			return this;
		}

		public Builder maxModelLen(int maxModelLen) {
			this.maxModelLen = maxModelLen;
			return this;
		}

		public Builder metricsDelay(Duration metricsDelay) {
			this.metricsDelay = metricsDelay;
			return this;
		}

		public Builder charsPerToken(int charsPerToken) {
			this.charsPerToken = charsPerToken;
			return this;
		}

		public Builder traceCapacity(int traceCapacity) {
			this.traceCapacity = traceCapacity;
			return this;
		}

		public Builder reasoningShare(double reasoningShare) {
			this.reasoningShare = reasoningShare;
			return this;
		}

		public Builder maxNumQueuedReqs(int maxNumQueuedReqs) {
			this.maxNumQueuedReqs = maxNumQueuedReqs;
			return this;
		}

		public Builder prefixCaching(boolean prefixCaching) {
			this.prefixCaching = prefixCaching;
			return this;
		}

		public Builder aliases(List<String> aliases) {
			this.aliases = aliases;
			return this;
		}

		public Builder loraAdapters(List<String> loraAdapters) {
			this.loraAdapters = loraAdapters;
			return this;
		}

		public Builder numSpeculativeTokens(int numSpeculativeTokens) {
			this.numSpeculativeTokens = numSpeculativeTokens;
			return this;
		}

		public Builder specAcceptanceRate(double specAcceptanceRate) {
			this.specAcceptanceRate = specAcceptanceRate;
			return this;
		}

		public Builder perRequestMetrics(boolean perRequestMetrics) {
			this.perRequestMetrics = perRequestMetrics;
			return this;
		}

		public Builder otlpTracesEndpoint(URI otlpTracesEndpoint) {
			this.otlpTracesEndpoint = otlpTracesEndpoint;
			return this;
		}

		public SimulatorProperties build() {
			return new SimulatorProperties(this.port, this.model, this.seed, this.maxNumSeqs, this.maxNumBatchedTokens,
					this.chunkedPrefill, this.blockSize, this.numKvBlocks, this.stepFixedCost, this.stepCostPerSeq,
					this.stepCostPerPrefillToken, this.defaultMaxTokens, this.maxModelLen, this.metricsDelay,
					this.charsPerToken, this.traceCapacity, this.reasoningShare, this.maxNumQueuedReqs,
					this.prefixCaching, this.aliases, this.loraAdapters, this.numSpeculativeTokens,
					this.specAcceptanceRate, this.perRequestMetrics, this.otlpTracesEndpoint);
		}

	}

}
