package dev.tokengap.sim;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

/**
 * {@code GET /metrics}: vLLM's exposition of the engine's state, optionally late or
 * failing.
 */
final class MetricsHandler {

	private final SimEngine engine;

	private final VllmMetricsWriter writer;

	private final AtomicReference<MetricsFaults> faults;

	MetricsHandler(SimEngine engine, AtomicReference<MetricsFaults> faults) {
		this.engine = engine;
		this.writer = new VllmMetricsWriter(engine.properties().model());
		this.faults = faults;
	}

	Mono<Void> metrics(HttpServerRequest request, HttpServerResponse response) {
		MetricsFaults current = this.faults.get();
		Duration delay = current.delay(this.engine.properties().metricsDelay());
		// Mono.delay waits on a timer, never on the event loop;
		// the body is read after the wait.
		Mono<Void> answer = Mono.defer(() -> answer(response, current));
		return delay.isZero() ? answer : Mono.delay(delay).then(answer);
	}

	private Mono<Void> answer(HttpServerResponse response, MetricsFaults current) {
		if (current.metricsStatus() != null && current.metricsStatus() != 200) {
			HttpResponseStatus status = HttpResponseStatus.valueOf(current.metricsStatus());
			return response.status(status).sendString(Mono.just(status.reasonPhrase())).then();
		}
		String body = this.writer.write(this.engine.metrics(), this.engine.gauges());
		return response.status(HttpResponseStatus.OK)
			.header(HttpHeaderNames.CONTENT_TYPE, VllmMetricsWriter.CONTENT_TYPE)
			.sendString(Mono.just(body))
			.then();
	}

}
