package dev.tokengap.sim;

import java.util.Arrays;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;

/**
 * One request inside the engine. Created by the HTTP layer; after submission every
 * mutable field belongs to the engine thread.
 */
final class SimSequence {

	enum State {

		NEW, WAITING, RUNNING, FINISHED, ABORTED

	}

	final String traceId;

	final int promptTokens;

	/** What the prefix cache knows the prompt by, or {@code null}: never cached. */
	final String promptText;

	final int maxTokens;

	final long arrivalNanos;

	/** Token indexes whose steps are made longer, in increasing order. */
	final int[] engineStallTokens;

	final long[] engineStallNanos;

	private final TokenVocabulary.Texts texts;

	// Unicast with an unbounded buffer: the engine never waits for a slow client, tokens
	// queue per request as they do in vLLM's output queue.
	private final Sinks.Many<TokenOutput> sink = Sinks.many().unicast().onBackpressureBuffer();

	State state = State.NEW;

	int generated;

	int computed;

	int blocks;

	boolean preemptedSinceLastToken;

	/** Times preempted so far, for {@code vllm:request_num_preemptions}. */
	int preemptions;

	boolean stalledSinceLastToken;

	/** Engine stalls applied so far. */
	int engineStallsApplied;

	long lastTokenNanos;

	long firstTokenNanos;

	/** When the scheduler first admitted it (the end of its WAITING phase), 0 before. */
	long firstScheduledNanos;

	/**
	 * Prompt tokens found in the prefix cache when first scheduled (vLLM's
	 * {@code num_cached_tokens}), -1 before.
	 */
	int cachedPromptTokens = -1;

	/** Prefix-cache hashes of the prompt's full blocks, computed on first use. */
	long[] blockHashes;

	/** Prompt blocks already added to the prefix cache. */
	int cachedBlocksAdded;

	private double[] interTokenSeconds = new double[16];

	private int interTokenCount;

	SimSequence(String traceId, String promptText, int promptTokens, int maxTokens, TokenVocabulary.Texts texts,
			int[] engineStallTokens, long[] engineStallNanos) {
		this.traceId = traceId;
		this.promptText = promptText;
		this.promptTokens = promptTokens;
		this.maxTokens = maxTokens;
		this.texts = texts;
		this.engineStallTokens = engineStallTokens;
		this.engineStallNanos = engineStallNanos;
		this.arrivalNanos = System.nanoTime();
	}

	Flux<TokenOutput> outputs() {
		return this.sink.asFlux();
	}

	Sinks.Many<TokenOutput> sink() {
		return this.sink;
	}

	String nextText() {
		return this.texts.next();
	}

	/**
	 * Tokens whose KV must exist after this sequence's next output: prompt plus output so
	 * far.
	 */
	int totalTokens() {
		return this.promptTokens + this.generated;
	}

	int pendingTokens() {
		return totalTokens() - this.computed;
	}

	/**
	 * Decoding: past its first token and not preempted since its last one, so all that is
	 * left to compute is its own sampled output (the last token, and with speculative
	 * decoding the drafts accepted with it). Anything else is prefill: a new prompt's, or
	 * a recompute.
	 */
	boolean decoding() {
		return this.generated > 0 && !this.preemptedSinceLastToken;
	}

	/**
	 * Preempted by recompute and not yet given its next token: all it computes until then
	 * is recompute work, redone because its KV blocks were taken (also when it was
	 * preempted during its first prefill).
	 */
	boolean recomputing() {
		return this.preemptedSinceLastToken;
	}

	boolean active() {
		return this.state == State.WAITING || this.state == State.RUNNING;
	}

	void addInterTokenLatency(double seconds) {
		if (this.interTokenCount == this.interTokenSeconds.length) {
			this.interTokenSeconds = Arrays.copyOf(this.interTokenSeconds, this.interTokenCount * 2);
		}
		this.interTokenSeconds[this.interTokenCount++] = seconds;
	}

	double[] interTokenLatencies() {
		return Arrays.copyOf(this.interTokenSeconds, this.interTokenCount);
	}

}
