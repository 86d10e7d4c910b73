package dev.tokengap.proxy;

import org.springframework.http.server.reactive.HttpHandler;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.http.server.reactive.ServerHttpResponseDecorator;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

import dev.tokengap.metrics.ModelLabels;
import dev.tokengap.metrics.RequestTracer;
import dev.tokengap.metrics.TokengapMeters;
import dev.tokengap.timing.LogRateLimiter;
import dev.tokengap.timing.NanoClock;

/**
 * The whole proxy port: every method and path is forwarded to the engine. Registered as
 * the application's only {@link HttpHandler}, so no Spring endpoint is ever reachable on
 * this port.
 *
 * <p>
 * It works on Reactor Netty's request and response directly: the streaming path writes to
 * the client channel itself and times each event when the socket has taken its bytes.
 */
public final class ProxyHandler implements HttpHandler {

	/** Error answers (502, 504, 413, 400) logged per second at most. */
	private static final int ERROR_LOG_LINES_PER_SECOND = 10;

	private final UpstreamClient upstream;

	private final TokengapMeters meters;

	private final ModelLabels labels;

	private final ProxyProperties properties;

	private final NanoClock clock;

	private final LogRateLimiter errorLog;

	private final RequestTracer tracer;

	/**
	 * Creates the handler.
	 * @param upstream the engine client
	 * @param meters the meter catalogue
	 * @param labels the model label policy
	 * @param properties inbound limits
	 * @param clock the clock events are timed with
	 * @param tracer starts each request's trace (the context sent to the engine)
	 */
	public ProxyHandler(UpstreamClient upstream, TokengapMeters meters, ModelLabels labels, ProxyProperties properties,
			NanoClock clock, RequestTracer tracer) {
		this.upstream = upstream;
		this.meters = meters;
		this.labels = labels;
		this.properties = properties;
		this.clock = clock;
		this.errorLog = new LogRateLimiter(ERROR_LOG_LINES_PER_SECOND, clock);
		this.tracer = tracer;
	}

	@Override
	public Mono<Void> handle(ServerHttpRequest request, ServerHttpResponse response) {
		return handle(ServerHttpRequestDecorator.<HttpServerRequest>getNativeRequest(request),
				ServerHttpResponseDecorator.<HttpServerResponse>getNativeResponse(response));
	}

	/**
	 * Proxies one exchange, given Reactor Netty's own request and response (as the proxy
	 * port's server calls it).
	 * @param in the client's request
	 * @param out the response to the client
	 * @return completes when the exchange has its outcome
	 */
	public Mono<Void> handle(HttpServerRequest in, HttpServerResponse out) {
		return new ProxyExchange(this, in, out, this.clock.nanoTime());
	}

	UpstreamClient upstream() {
		return this.upstream;
	}

	TokengapMeters meters() {
		return this.meters;
	}

	ModelLabels labels() {
		return this.labels;
	}

	ProxyProperties properties() {
		return this.properties;
	}

	NanoClock clock() {
		return this.clock;
	}

	RequestTracer tracer() {
		return this.tracer;
	}

	LogRateLimiter errorLog() {
		return this.errorLog;
	}

}
