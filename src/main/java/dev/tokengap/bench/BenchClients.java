package dev.tokengap.bench;

import java.time.Duration;
import java.util.Map;

import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import reactor.netty.http.client.HttpClient;

import dev.tokengap.client.HttpClients;

/**
 * The bench's HTTP clients, tokengap's Reactor Netty client setup ({@link HttpClients})
 * on Reactor Netty's own loops: one for the load, and a small one for the rest
 * ({@code /metrics}, {@code /v1/models}, {@code /version}). An {@code https://} URL is
 * reached over TLS with the JVM's default trust.
 */
final class BenchClients {

	private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(30);

	private static final Duration MAX_IDLE = Duration.ofSeconds(4);

	/** For the requests beside the load: a few at a time. */
	static final HttpClient SMALL = HttpClients.create(
			HttpClients.pool("tokengap-bench-small", 4, Duration.ofSeconds(45), MAX_IDLE, null), null, CONNECT_TIMEOUT);

	private BenchClients() {
	}

	/**
	 * The load's client.
	 * @param connections the most connections at once
	 * @param headers sent on every request
	 * @return a client that asks for an event stream of JSON requests
	 */
	static HttpClient load(int connections, Map<String, String> headers) {
		return HttpClients
			.create(HttpClients.pool("tokengap-bench", connections, Duration.ofSeconds(45), MAX_IDLE, null), null,
					CONNECT_TIMEOUT)
			.headers((h) -> h.set(HttpHeaderNames.CONTENT_TYPE, "application/json")
				.set(HttpHeaderNames.ACCEPT, "text/event-stream")
				.add(headers(headers)))
			.responseTimeout(Duration.ofMinutes(10));
	}

	private static HttpHeaders headers(Map<String, String> headers) {
		HttpHeaders http = new DefaultHttpHeaders();
		headers.forEach(http::set);
		return http;
	}

}
