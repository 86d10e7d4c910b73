package dev.tokengap.sim;

import java.net.URI;
import java.time.Duration;
import java.util.List;

import jakarta.validation.constraints.DecimalMax;
import jakarta.validation.constraints.DecimalMin;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.Positive;
import jakarta.validation.constraints.PositiveOrZero;
import org.hibernate.validator.constraints.time.DurationMin;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.validation.annotation.Validated;

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
@Validated
public record SimulatorProperties(@DefaultValue("8000") @PositiveOrZero @Max(65535) int port,
		@DefaultValue("sim-llama-3-8b") @NotBlank String model, @DefaultValue("42") long seed,
		@DefaultValue("64") @Positive int maxNumSeqs, @DefaultValue("2048") @Positive int maxNumBatchedTokens,
		@DefaultValue("true") boolean chunkedPrefill, @DefaultValue("16") @Positive int blockSize,
		@DefaultValue("4096") @Positive int numKvBlocks,
		@DefaultValue("20ms") @DurationMin(nanos = 0, inclusive = false) Duration stepFixedCost,
		@DefaultValue("250us") @DurationMin(nanos = 0) Duration stepCostPerSeq,
		@DefaultValue("20us") @DurationMin(nanos = 0) Duration stepCostPerPrefillToken,
		@DefaultValue("128") @Positive int defaultMaxTokens, @DefaultValue("8192") @Positive int maxModelLen,
		@DefaultValue("0ms") @DurationMin(nanos = 0) Duration metricsDelay,
		@DefaultValue("4") @Positive int charsPerToken, @DefaultValue("100000") @Positive int traceCapacity,
		@DefaultValue("0") @DecimalMin("0") @DecimalMax("1") double reasoningShare,
		@DefaultValue("0") @PositiveOrZero int maxNumQueuedReqs, @DefaultValue("true") boolean prefixCaching,
		@DefaultValue List<String> aliases, @DefaultValue List<String> loraAdapters,
		@DefaultValue("0") @PositiveOrZero @Max(16) int numSpeculativeTokens,
		@DefaultValue("0.7") @DecimalMin("0") @DecimalMax("1") double specAcceptanceRate,
		@DefaultValue("false") boolean perRequestMetrics, URI otlpTracesEndpoint) {

	public SimulatorProperties {
		aliases = (aliases != null) ? List.copyOf(aliases) : List.of();
		loraAdapters = (loraAdapters != null) ? List.copyOf(loraAdapters) : List.of();
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
	 * Fails fast on values the engine cannot run with, for properties built in code and
	 * so never validated by Spring. Like vLLM, refuses a KV cache too small for one
	 * max-length sequence.
	 */
	void requireUsable() {
		requirePositive("max-num-seqs", this.maxNumSeqs);
		requirePositive("max-num-batched-tokens", this.maxNumBatchedTokens);
		requirePositive("block-size", this.blockSize);
		requirePositive("num-kv-blocks", this.numKvBlocks);
		requirePositive("default-max-tokens", this.defaultMaxTokens);
		requirePositive("max-model-len", this.maxModelLen);
		requirePositive("chars-per-token", this.charsPerToken);
		requirePositive("trace-capacity", this.traceCapacity);
		requirePositive("step-fixed-cost", this.stepFixedCost.toNanos());
		requireNotNegative("step-cost-per-seq", this.stepCostPerSeq.toNanos());
		requireNotNegative("step-cost-per-prefill-token", this.stepCostPerPrefillToken.toNanos());
		requireNotNegative("metrics-delay", this.metricsDelay.toNanos());
		if (!(this.reasoningShare >= 0 && this.reasoningShare <= 1)) {
			throw new IllegalArgumentException("tokengap.sim.reasoning-share must be between 0 and 1");
		}
		requireNotNegative("max-num-queued-reqs", this.maxNumQueuedReqs);
		if (this.numSpeculativeTokens < 0 || this.numSpeculativeTokens > 16) {
			throw new IllegalArgumentException("tokengap.sim.num-speculative-tokens must be between 0 and 16");
		}
		if (!(this.specAcceptanceRate >= 0 && this.specAcceptanceRate <= 1)) {
			throw new IllegalArgumentException("tokengap.sim.spec-acceptance-rate must be between 0 and 1");
		}
		long kvTokens = (long) this.numKvBlocks * this.blockSize;
		if (kvTokens < this.maxModelLen) {
			throw new IllegalArgumentException("tokengap.sim: a KV cache of " + kvTokens
					+ " tokens (num-kv-blocks x block-size) cannot hold one sequence of max-model-len "
					+ this.maxModelLen);
		}
	}

	private static void requirePositive(String name, long value) {
		if (value <= 0) {
			throw new IllegalArgumentException("tokengap.sim." + name + " must be positive");
		}
	}

	private static void requireNotNegative(String name, long value) {
		if (value < 0) {
			throw new IllegalArgumentException("tokengap.sim." + name + " must not be negative");
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
