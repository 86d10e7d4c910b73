package dev.tokengap.sim;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

import io.opentelemetry.context.Context;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;
import reactor.netty.http.server.HttpServerResponse;

/**
 * The engine sequences of one request, one per choice ({@code n}), each with its own KV
 * blocks, as vLLM runs the child requests of a parent; their outputs are merged in the
 * order the engine thread emits them, i.e. step by step.
 */
final class SequenceGroup {

	private final SimEngine engine;

	private final List<SimSequence> sequences;

	private final CompletionRequest call;

	private final Context parent;

	/**
	 * @param traceId the request's trace id; with {@code n > 1} choice i is traced as
	 * {@code i_<traceId>}, as vLLM names its child requests
	 * @param traceparent the request's W3C {@code traceparent}, or null: the parent of
	 * each sequence's {@code llm_request} span when spans are exported
	 */
	SequenceGroup(SimEngine engine, String traceId, CompletionRequest call, FaultHeaders faults, String traceparent) {
		this.engine = engine;
		this.call = call;
		this.parent = engine.spans().parent(traceparent);
		this.sequences = new ArrayList<>(call.n());
		for (int i = 0; i < call.n(); i++) {
			String seed = (i == 0) ? call.promptText() : call.promptText() + '\u0000' + i;
			// Every choice has the same prompt: the prefix cache serves it to all but the
			// first, as vLLM's parallel sampling shares the prompt's KV blocks.
			this.sequences.add(new SimSequence((call.n() > 1) ? i + "_" + traceId : traceId, call.promptText(),
					call.promptTokens(), call.maxTokens(), engine.vocabulary().textsFor(seed),
					faults.engineStallTokens(), faults.engineStallNanos()));
		}
	}

	/**
	 * Submits the sequences and answers with their outputs, or, when the engine refuses
	 * the request (its admission limit: 503), with that refusal.
	 * @param answer writes the response from the outputs on the response's event loop
	 * @param refusal writes the error response
	 */
	Mono<Void> answer(HttpServerResponse response, Function<Flux<ChoiceOutput>, Mono<Void>> answer,
			Function<InvalidRequestException, Mono<Void>> refusal) {
		try {
			submit();
		}
		catch (InvalidRequestException ex) {
			return refusal.apply(ex);
		}
		return answer.apply(outputs(response));
	}

	/**
	 * Hands every sequence to the engine; when it refuses one, the ones already in are
	 * aborted and the refusal is thrown.
	 */
	void submit() {
		for (int i = 0; i < this.sequences.size(); i++) {
			try {
				this.engine.submit(this.sequences.get(i));
			}
			catch (InvalidRequestException ex) {
				this.sequences.subList(0, i).forEach(this.engine::abort);
				throw ex;
			}
		}
	}

	/**
	 * The outputs of all choices on the response's event loop; a cancel aborts every
	 * sequence still running.
	 */
	Flux<ChoiceOutput> outputs(HttpServerResponse response) {
		// The engine thread only enqueues an output; formatting and writing run on the
		// connection's event loop, as vLLM's engine core hands outputs to its API server.
		return merged().doOnCancel(this::abort).publishOn(Schedulers.fromExecutor(eventLoopOf(response)));
	}

	/**
	 * One queue fed on the engine thread, so the choices stay in emission order even
	 * while a slow client leaves them queued (a merge would drain one choice's backlog
	 * before the next).
	 */
	private Flux<ChoiceOutput> merged() {
		if (this.sequences.size() == 1) {
			return traced(this.sequences.get(0)).map((token) -> new ChoiceOutput(0, token));
		}
		Sinks.Many<ChoiceOutput> merged = Sinks.many().unicast().onBackpressureBuffer();
		AtomicInteger open = new AtomicInteger(this.sequences.size());
		Disposable.Composite feeds = Disposables.composite();
		for (int i = 0; i < this.sequences.size(); i++) {
			int choice = i;
			feeds.add(traced(this.sequences.get(i))
				.subscribe((token) -> merged.tryEmitNext(new ChoiceOutput(choice, token)), merged::tryEmitError, () -> {
					if (open.decrementAndGet() == 0) {
						merged.tryEmitComplete();
					}
				}));
		}
		return merged.asFlux().doOnCancel(feeds::dispose);
	}

	/**
	 * A sequence's outputs; its last one (which carries the engine's timestamps) ends its
	 * span, on the engine thread, when spans are exported.
	 */
	private Flux<TokenOutput> traced(SimSequence sequence) {
		LlmRequestSpans spans = this.engine.spans();
		if (!spans.enabled()) {
			return sequence.outputs();
		}
		return sequence.outputs().doOnNext((token) -> {
			if (token.timings() != null) {
				spans.finished(this.parent, sequence.traceId, this.call, token.timings(),
						this.engine.properties().model());
			}
		});
	}

	void abort() {
		this.sequences.forEach(this.engine::abort);
	}

	private static Executor eventLoopOf(HttpServerResponse response) {
		AtomicReference<Executor> eventLoop = new AtomicReference<>();
		response.withConnection((connection) -> eventLoop.set(connection.channel().eventLoop()));
		return eventLoop.get();
	}

}
