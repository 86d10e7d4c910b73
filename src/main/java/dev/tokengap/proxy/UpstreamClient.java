package dev.tokengap.proxy;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeoutException;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelOption;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.util.AsciiString;
import reactor.core.publisher.Mono;
import reactor.netty.http.Http11SslContextSpec;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.client.HttpClientRequest;
import reactor.netty.http.client.PrematureCloseException;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.resources.ConnectionProvider;
import reactor.netty.resources.LoopResources;

import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.ssl.SslOptions;

import dev.tokengap.metrics.RequestTrace;
import dev.tokengap.metrics.TraceParent;

/**
 * Sends a client's request to the engine with the same method, path, query, end-to-end
 * headers and body bytes, through Reactor Netty's {@link HttpClient} and a pooled
 * {@link ConnectionProvider}, and hands the response on as soon as its headers arrive.
 * <p>
 * The client runs on the proxy port's own event loops, colocated: a connection made for a
 * request is made on its client connection's loop. The pool is one for all loops, so a
 * pooled connection may serve a request of another loop, whose events then cross loops
 * (what that costs: docs/performance.md). The pool bounds the engine connections
 * ({@code max-connections}, a request waiting longer than {@code pending-acquire-timeout}
 * for one is answered 503), closes connections idle longer than {@code max-idle-time} in
 * the background (below the engine's own keep-alive, so no request lands on a connection
 * being closed) and those older than {@code max-life-time}, and publishes Reactor Netty's
 * pool metrics ({@code reactor_netty_connection_provider_*}). An {@code https://} engine
 * is reached over TLS, trusted as a Spring Boot SSL bundle says.
 */
public final class UpstreamClient {

	/** The pool's name, the {@code name} label of its metrics. */
	public static final String POOL_NAME = "engine";

	private static final HopByHopHeaders NOT_FORWARDED = HopByHopHeaders.andAlso("host", "content-length",
			"x-forwarded-for", "x-forwarded-proto", "x-forwarded-host", "x-request-id", TraceParent.HEADER,
			TraceParent.STATE_HEADER);

	private static final AsciiString TRACEPARENT = AsciiString.cached(TraceParent.HEADER);

	private static final AsciiString TRACESTATE = AsciiString.cached(TraceParent.STATE_HEADER);

	private static final AsciiString X_FORWARDED_FOR = AsciiString.cached("x-forwarded-for");

	private static final AsciiString X_FORWARDED_PROTO = AsciiString.cached("x-forwarded-proto");

	private static final AsciiString X_FORWARDED_HOST = AsciiString.cached("x-forwarded-host");

	private final ConnectionProvider pool;

	private final HttpClient http;

	private final String base;

	private final String basePath;

	private final UpstreamProperties properties;

	/**
	 * Creates the client and its pool.
	 * @param properties where the engine is, the timeouts and the pool's bounds
	 * @param loops the event loops to run the engine connections on
	 * @param ssl the bundle that trusts an {@code https://} engine, or null for the JVM's
	 * default trust
	 */
	public UpstreamClient(UpstreamProperties properties, LoopResources loops, SslBundle ssl) {
		this.properties = properties;
		URI url = properties.url();
		String path = (url.getRawPath() == null) ? "" : url.getRawPath();
		this.basePath = path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
		this.base = url.getScheme() + "://" + url.getRawAuthority() + this.basePath;
		this.pool = ConnectionProvider.builder(POOL_NAME)
			.maxConnections(properties.maxConnections())
			.pendingAcquireTimeout(properties.pendingAcquireTimeout())
			.pendingAcquireMaxCount(-1)
			.maxIdleTime(properties.maxIdleTime())
			.maxLifeTime(properties.maxLifeTime())
			.evictInBackground(evictionInterval(properties.maxIdleTime()))
			.metrics(true)
			.build();
		HttpClient client = HttpClient.create(this.pool)
			.runOn(loops)
			.baseUrl(url.getScheme() + "://" + url.getRawAuthority())
			.option(ChannelOption.CONNECT_TIMEOUT_MILLIS,
					(int) Math.min(Integer.MAX_VALUE, properties.connectTimeout().toMillis()))
			.compress(false)
			.followRedirect(false)
			.keepAlive(true);
		this.http = properties.secure() ? client.secure((spec) -> spec.sslContext(sslContext(ssl))) : client;
	}

	/**
	 * Idle connections are looked for a few times per max idle time, at most once a
	 * second.
	 */
	private static Duration evictionInterval(Duration maxIdle) {
		Duration quarter = maxIdle.dividedBy(4);
		return (quarter.compareTo(Duration.ofSeconds(1)) < 0) ? quarter : Duration.ofSeconds(1);
	}

	/** TLS to the engine: the bundle's trust and key material, protocols and ciphers. */
	private static Http11SslContextSpec sslContext(SslBundle bundle) {
		Http11SslContextSpec spec = Http11SslContextSpec.forClient();
		if (bundle == null) {
			return spec;
		}
		return spec.configure((builder) -> {
			builder.trustManager(bundle.getManagers().getTrustManagerFactory())
				.keyManager(bundle.getManagers().getKeyManagerFactory());
			SslOptions options = bundle.getOptions();
			if (options != null && options.getEnabledProtocols() != null) {
				builder.protocols(options.getEnabledProtocols());
			}
			if (options != null && options.getCiphers() != null) {
				builder.ciphers(List.of(options.getCiphers()));
			}
		});
	}

	/**
	 * The engine's response head for a client's request: emitted once its headers
	 * arrived, with the connection whose inbound is the body.
	 * @param in the client's request (method, URI, headers)
	 * @param body the body bytes read from the client (a reference of its own is taken)
	 * @param requestId the request id to send as {@code X-Request-Id}
	 * @param trace the request's trace, whose context is sent as {@code traceparent} and
	 * {@code tracestate}
	 * @return the response and its connection, or an error said as the client's answer
	 * ({@link UpstreamUnavailableException}, {@link UpstreamSaturatedException},
	 * {@link UpstreamTimeoutException})
	 */
	Mono<EngineCall.Head> exchange(HttpServerRequest in, ByteBuf body, String requestId, RequestTrace trace) {
		HttpHeaders given = in.requestHeaders();
		boolean withBody = body.isReadable() || given.contains(HttpHeaderNames.CONTENT_LENGTH)
				|| given.contains(HttpHeaderNames.TRANSFER_ENCODING);
		int length = withBody ? body.readableBytes() : -1;
		// held until the exchange ends: a send retried on a fresh connection sends it
		// again
		body.retain();
		return this.http.request(in.method()).uri(this.basePath + in.uri()).send((request, out) -> {
			headers(in, request, requestId, length);
			traceContext(request.requestHeaders(), trace);
			return withBody ? out.send(Mono.just(body.retainedDuplicate())) : out;
		})
			.responseConnection((response, connection) -> Mono.just(new EngineCall.Head(response, connection)))
			.single()
			.timeout(this.properties.responseTimeout(),
					Mono.error(() -> new UpstreamTimeoutException("The engine sent no response headers within "
							+ this.properties.responseTimeout() + " (tokengap.upstream.response-timeout)")))
			.onErrorMap(this::beforeResponse)
			.doOnDiscard(EngineCall.Head.class, (head) -> head.connection().dispose())
			.doFinally((signal) -> body.release());
	}

	private void headers(HttpServerRequest in, HttpClientRequest request, String requestId, int contentLength) {
		HttpHeaders headers = request.requestHeaders();
		HttpHeaders given = in.requestHeaders();
		// Reactor Netty's defaults are not the client's: only what the client sent goes
		// on
		if (!given.contains(HttpHeaderNames.USER_AGENT)) {
			headers.remove(HttpHeaderNames.USER_AGENT);
		}
		if (!given.contains(HttpHeaderNames.ACCEPT)) {
			headers.remove(HttpHeaderNames.ACCEPT);
		}
		NOT_FORWARDED.copy(given, headers);
		forwarded(in, headers);
		headers.set(ProxyExchange.X_REQUEST_ID, requestId);
		if (contentLength >= 0) {
			headers.set(HttpHeaderNames.CONTENT_LENGTH, contentLength);
		}
		else {
			headers.remove(HttpHeaderNames.CONTENT_LENGTH);
		}
	}

	private static void traceContext(HttpHeaders headers, RequestTrace trace) {
		headers.set(TRACEPARENT, trace.traceparent());
		String state = trace.tracestate();
		if (state != null) {
			headers.set(TRACESTATE, state);
		}
	}

	private static void forwarded(HttpServerRequest in, HttpHeaders headers) {
		String client = address(in.remoteAddress());
		String prior = in.requestHeaders().get(X_FORWARDED_FOR);
		headers.set(X_FORWARDED_FOR, (prior == null || prior.isBlank()) ? client : prior + ", " + client);
		String proto = in.requestHeaders().get(X_FORWARDED_PROTO);
		headers.set(X_FORWARDED_PROTO, (proto != null) ? proto : in.scheme());
		String host = in.requestHeaders().get(X_FORWARDED_HOST);
		String clientHost = in.requestHeaders().get(HttpHeaderNames.HOST);
		if (host != null) {
			headers.set(X_FORWARDED_HOST, host);
		}
		else if (clientHost != null) {
			headers.set(X_FORWARDED_HOST, clientHost);
		}
	}

	private static String address(SocketAddress address) {
		if (address instanceof InetSocketAddress inet && inet.getAddress() != null) {
			return inet.getAddress().getHostAddress();
		}
		return "unknown";
	}

	/**
	 * What a failure before the response headers means for the client.
	 * @param error the failure
	 * @return the exception the exchange fails with
	 */
	Throwable beforeResponse(Throwable error) {
		if (error instanceof UpstreamSaturatedException || error instanceof UpstreamUnavailableException
				|| error instanceof UpstreamTimeoutException) {
			return error;
		}
		if (error instanceof TimeoutException || isPendingLimit(error)) {
			// the pool's: the request's own wait for the headers fails as
			// UpstreamTimeoutException
			return new UpstreamSaturatedException(
					"All " + this.properties.maxConnections() + " engine connections stayed busy for "
							+ this.properties.pendingAcquireTimeout()
							+ " (tokengap.upstream.pending-acquire-timeout); raise tokengap.upstream.max-connections",
					error);
		}
		if (error instanceof DecoderException || error instanceof IllegalArgumentException) {
			// Netty's decoder refuses what is not HTTP; a status line whose code is not a
			// number fails as NumberFormatException
			return new UpstreamUnavailableException(
					"The engine at " + this.base + " sent an invalid response: " + error.getMessage()
							+ ((error.getCause() != null) ? " (" + error.getCause().getMessage() + ")" : ""),
					error);
		}
		if (error instanceof PrematureCloseException) {
			return new UpstreamUnavailableException(
					"The engine at " + this.base + " closed the connection before its response headers", error);
		}
		if (error instanceof IOException) {
			return new UpstreamUnavailableException(
					"The engine at " + this.base + " is unreachable: " + error.getClass().getSimpleName()
							+ ((error.getMessage() != null) ? ": " + error.getMessage() : ""),
					error);
		}
		if (error instanceof IllegalStateException) {
			return new UpstreamUnavailableException(
					"The engine at " + this.base + " cannot be reached: " + error.getMessage(), error);
		}
		return error;
	}

	/**
	 * Reactor Netty's pool refusing a waiter over its limit (no public type of its own).
	 */
	private static boolean isPendingLimit(Throwable error) {
		return error.getClass().getSimpleName().equals("PoolAcquirePendingLimitException");
	}

	/**
	 * @return how long an engine may stay silent mid-body
	 */
	Duration idleTimeout() {
		return this.properties.idleTimeout();
	}

	/**
	 * The client the proxy reaches the engine with (its pool, loops, TLS and connect
	 * timeout), for the engine's other endpoints ({@code /v1/models}).
	 * @return the client
	 */
	public HttpClient http() {
		return this.http;
	}

	/**
	 * @return the engine's base URL, without a trailing slash
	 */
	public String base() {
		return this.base;
	}

	/** Closes the engine connections. */
	public void close() {
		this.pool.disposeLater().block(Duration.ofSeconds(5));
	}

}
