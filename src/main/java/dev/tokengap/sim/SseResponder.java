package dev.tokengap.sim;

import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelOption;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerResponse;

/**
 * Writes one streamed answer for any endpoint: headers at once, the shape's opening
 * events, one flushed write per event, its closing events; with the request's faults on
 * the way (a held event, a reset, an in-band error).
 *
 * <pre>
 * start() --> of(output) per engine output --> end()
 *                 | X-Sim-Error-After K            | X-Sim-Reset-After K
 *                 +--> error(message)              +--> TCP reset
 * </pre>
 */
final class SseResponder {

	static final String EVENT_STREAM = "text/event-stream; charset=utf-8";

	static final String ERROR_AFTER_MESSAGE = "Simulated engine error (X-Sim-Error-After)";

	private SseResponder() {
	}

	static Mono<Void> stream(HttpServerResponse response, Flux<ChoiceOutput> outputs, StreamShape shape,
			FaultHeaders faults) {
		Flux<ChoiceOutput> held = hold(outputs, faults);
		Flux<String> events = faults.errorBeforeFirst() ? dropFirst(held, shape) : body(held, shape, faults);
		Flux<ByteBuf> buffers = events.map((event) -> ByteBufUtil.writeUtf8(response.alloc(), event));
		// Headers go out at once, as vLLM's;
		// the first token's event only follows the prefill.
		response.status(HttpResponseStatus.OK).header(HttpHeaderNames.CONTENT_TYPE, EVENT_STREAM);
		Mono<Void> sent = response.sendHeaders().send(buffers, (buffer) -> true).then();
		return faults.resets() ? sent.then(Mono.defer(() -> reset(response))) : sent;
	}

	private static Flux<ChoiceOutput> hold(Flux<ChoiceOutput> outputs, FaultHeaders faults) {
		if (faults.httpStallToken() < 0) {
			return outputs;
		}
		return outputs.concatMap((output) -> faults.holdsToken(output.index())
				? Mono.delay(faults.httpStall()).thenReturn(output) : Mono.just(output));
	}

	private static Flux<String> body(Flux<ChoiceOutput> outputs, StreamShape shape, FaultHeaders faults) {
		int cutAfter = faults.cutAfterToken();
		AtomicBoolean cut = new AtomicBoolean();
		// Cutting cancels the engine's outputs, which aborts the sequences.
		Flux<ChoiceOutput> kept = (cutAfter < 0) ? outputs
				: outputs.takeUntil((output) -> output.index() >= cutAfter && cut.compareAndSet(false, true));
		Flux<String> tail = Flux.defer(() -> Flux.fromIterable(
				!cut.get() ? shape.end() : faults.resets() ? List.<String>of() : shape.error(ERROR_AFTER_MESSAGE)));
		return Flux.fromIterable(shape.start())
			.concatWith(kept.concatMapIterable(shape::of))
			.concatWith(tail)
			.onErrorResume((ex) -> Flux.fromIterable(shape.error(String.valueOf(ex.getMessage()))));
	}

	private static Flux<String> dropFirst(Flux<ChoiceOutput> outputs, StreamShape shape) {
		return Flux.fromIterable(shape.start())
			.concatWith(outputs.take(1).concatMapIterable(shape::dropped))
			.onErrorResume((ex) -> Flux.fromIterable(shape.error(String.valueOf(ex.getMessage()))));
	}

	/** Closes with a TCP reset (SO_LINGER 0): no terminating chunk, no [DONE]. */
	private static Mono<Void> reset(HttpServerResponse response) {
		response.withConnection((connection) -> {
			connection.channel().config().setOption(ChannelOption.SO_LINGER, 0);
			connection.channel().close();
		});
		return Mono.empty();
	}

	/**
	 * vLLM's in-band error, written with Python's {@code json.dumps} defaults (spaces
	 * after {@code :} and {@code ,}).
	 */
	static String openAiError(String message) {
		return "{\"error\": {\"message\": " + OpenAiJson.quote(message)
				+ ", \"type\": \"InternalServerError\", \"param\": null, \"code\": 500}}";
	}

}
