package dev.tokengap.bench;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import io.netty.buffer.ByteBufAllocator;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.ByteBufMono;
import reactor.netty.Connection;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.client.HttpClientResponse;

/**
 * Sends a {@link RequestPlan} and collects what each stream saw. Requests leave at their
 * planned arrival times; with a concurrency limit a request that arrives while the limit
 * is reached waits for a free slot (as {@code vllm bench serve}'s semaphore does). Every
 * stream is read as it arrives, on the event loop that owns its connection; nothing
 * blocks.
 */
final class LoadRun {

	private final HttpClient client;

	/**
	 * Passed to Reactor Netty as a {@link URI}: its String overload reads a one-digit
	 * port as part of the host name.
	 */
	private final URI url;

	private final int concurrency;

	LoadRun(HttpClient client, String url, int maxConcurrency) {
		this.client = client;
		this.url = URI.create(url);
		this.concurrency = (maxConcurrency > 0) ? maxConcurrency : Integer.MAX_VALUE;
	}

	/**
	 * Runs the plan to the end.
	 * @return the results in completion order, and the run's duration
	 */
	Outcome run(List<RequestPlan.Request> plan, Progress progress) {
		List<StreamResult> results = Collections.synchronizedList(new ArrayList<>(plan.size()));
		long start = System.nanoTime();
		Flux.fromIterable(plan)
			.delayUntil((request) -> untilArrival(start, request))
			.flatMap(this::send, this.concurrency)
			.doOnNext((result) -> result.finished(System.nanoTime()))
			.doOnNext(results::add)
			.doOnNext(progress::finished)
			.blockLast();
		return new Outcome(List.copyOf(results), System.nanoTime() - start);
	}

	private static Mono<Long> untilArrival(long start, RequestPlan.Request request) {
		long wait = start + request.arrivalNanos() - System.nanoTime();
		return (wait > 0) ? Mono.delay(Duration.ofNanos(wait)) : Mono.empty();
	}

	private Mono<StreamResult> send(RequestPlan.Request request) {
		return Mono.defer(() -> {
			StreamResult result = new StreamResult(request.promptTokens(), request.maxTokens(), System.nanoTime());
			return this.client.post()
				.uri(this.url)
				.send(ByteBufMono.fromString(Mono.just(request.body()), StandardCharsets.UTF_8,
						ByteBufAllocator.DEFAULT))
				.responseConnection((response, connection) -> receive(response, connection, result))
				.then(Mono.just(result))
				.onErrorResume((ex) -> {
					result.fail(
							ex.getClass().getSimpleName() + ((ex.getMessage() != null) ? ": " + ex.getMessage() : ""));
					return Mono.just(result);
				});
		});
	}

	private static Mono<Void> receive(HttpClientResponse response, Connection connection, StreamResult result) {
		int status = response.status().code();
		if (status != 200) {
			return connection.inbound()
				.receive()
				.aggregate()
				.asString()
				.defaultIfEmpty("")
				.doOnNext((body) -> result.fail("HTTP " + status + ": " + abbreviate(body)))
				.then();
		}
		return connection.inbound()
			.receive()
			.doOnNext((buf) -> result.onBytes(buf, System.nanoTime()))
			.then(Mono.fromRunnable(result::complete));
	}

	private static String abbreviate(String text) {
		String oneLine = text.replace('\n', ' ').strip();
		return (oneLine.length() > 200) ? oneLine.substring(0, 200) + "…" : oneLine;
	}

	/**
	 * @param results every request's result
	 * @param durationNanos from the first send to the last response's end
	 */
	record Outcome(List<StreamResult> results, long durationNanos) {

		/**
		 * Mean requests in flight over the run: the time every request (successful or
		 * not) spent between its send and its end, over the run's duration (the integral
		 * of the in-flight count over the window, divided by the window).
		 */
		double meanInFlight() {
			double busy = 0;
			for (StreamResult result : this.results) {
				busy += result.inFlightNanos();
			}
			return (this.durationNanos > 0) ? busy / this.durationNanos : Double.NaN;
		}

	}

}
