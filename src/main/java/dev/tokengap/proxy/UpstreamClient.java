package dev.tokengap.proxy;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeoutException;

import io.netty.buffer.ByteBuf;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.util.AsciiString;
import io.netty.util.concurrent.EventExecutor;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.Connection;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.client.HttpClientRequest;
import reactor.netty.http.client.PrematureCloseException;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.resources.ConnectionProvider;
import reactor.netty.resources.LoopResources;

import org.springframework.boot.ssl.SslBundle;

import dev.tokengap.client.HttpClients;

import dev.tokengap.metrics.RequestTrace;
import dev.tokengap.metrics.TraceParent;

/**
 * Sends a client's request to the engine with the same method, path, query, end-to-end
 * headers and body bytes, through Reactor Netty's {@link HttpClient} and a pooled
 * {@link ConnectionProvider}, and hands the response on as soon as its headers arrive.
 * <p>
 * Each of the proxy port's event loops has a client and a pool of its own, whose
 * connections run on that loop only; a request is sent with its client connection's
 * loop's, so the client connection, the engine connection and every event between them
 * stay on one loop. {@code max-connections} is the bound of all the pools together: each
 * loop's pool gets {@code max-connections / loops}, rounded down, and the first
 * {@code max-connections % loops} pools one more, so that they add up to
 * {@code max-connections}; a pool has at least one connection, so with fewer connections
 * than loops the bound is the number of loops. A request waiting longer than
 * {@code pending-acquire-timeout} for one of its loop's connections is answered 503, even
 * when another loop's pool has one free. The pools close connections idle longer than
 * {@code max-idle-time} in the background (below the engine's own keep-alive, so no
 * request lands on a connection being closed) and those older than {@code max-life-time},
 * and publish Reactor Netty's pool metrics ({@code reactor_netty_connection_provider_*}),
 * all with the name {@value #POOL_NAME}, told apart by their {@code id}. The engine's
 * other endpoints are asked through a small pool of their own ({@value #INFO_POOL_NAME}).
 * An {@code https://} engine is reached over TLS, trusted as a Spring Boot SSL bundle
 * says.
 */
public final class UpstreamClient {

	/** The pools' name, the {@code name} label of their metrics. */
	public static final String POOL_NAME = "engine";

	/** The name of the pool of the engine's other endpoints ({@link #http()}). */
	public static final String INFO_POOL_NAME = "engine-info";

	/** The engine's other endpoints are asked now and then, one or two at a time. */
	private static final int INFO_CONNECTIONS = 2;

	private static final HopByHopHeaders NOT_FORWARDED = HopByHopHeaders.andAlso("host", "content-length",
			"x-forwarded-for", "x-forwarded-proto", "x-forwarded-host", "x-request-id", TraceParent.HEADER,
			TraceParent.STATE_HEADER);

	private static final AsciiString TRACEPARENT = AsciiString.cached(TraceParent.HEADER);

	private static final AsciiString TRACESTATE = AsciiString.cached(TraceParent.STATE_HEADER);

	private static final AsciiString X_FORWARDED_FOR = AsciiString.cached("x-forwarded-for");

	private static final AsciiString X_FORWARDED_PROTO = AsciiString.cached("x-forwarded-proto");

	private static final AsciiString X_FORWARDED_HOST = AsciiString.cached("x-forwarded-host");

	/** The proxy port's loops; the client and pool of {@code loops[i]} are at i. */
	private final EventLoop[] loops;

	private final ConnectionProvider[] pools;

	private final HttpClient[] clients;

	private final ConnectionProvider infoPool;

	private final HttpClient info;

	private final String base;

	private final String basePath;

	private final UpstreamProperties properties;

	private final SslBundle ssl;

	/**
	 * Creates the clients and their pools, one of each per event loop.
	 * @param properties where the engine is, the timeouts and the pools' bound
	 * @param loops the proxy port's event loops, to run the engine connections on
	 * @param ssl the bundle that trusts an {@code https://} engine, or null for the JVM's
	 * default trust
	 */
	public UpstreamClient(UpstreamProperties properties, LoopResources loops, SslBundle ssl) {
		this.properties = properties;
		this.ssl = ssl;
		URI url = properties.url();
		String path = (url.getRawPath() == null) ? "" : url.getRawPath();
		this.basePath = path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
		this.base = url.getScheme() + "://" + url.getRawAuthority() + this.basePath;
		this.loops = serverLoops(loops);
		int[] shares = shares(properties.maxConnections(), this.loops.length);
		this.pools = new ConnectionProvider[this.loops.length];
		this.clients = new HttpClient[this.loops.length];
		for (int i = 0; i < this.loops.length; i++) {
			this.pools[i] = HttpClients.pool(POOL_NAME, shares[i], properties.pendingAcquireTimeout(),
					properties.maxIdleTime(), properties.maxLifeTime());
			// A loop resources object of its own per loop: Reactor Netty tells pools of
			// one name apart by a hash that includes it (the id label of their metrics).
			EventLoop loop = this.loops[i];
			LoopResources only = (useNative) -> loop;
			this.clients[i] = client(this.pools[i], only, url);
		}
		this.infoPool = HttpClients.pool(INFO_POOL_NAME, INFO_CONNECTIONS, properties.pendingAcquireTimeout(),
				properties.maxIdleTime(), properties.maxLifeTime());
		this.info = client(this.infoPool, loops, url);
	}

	private HttpClient client(ConnectionProvider pool, LoopResources loops, URI url) {
		HttpClient client = HttpClients.create(pool, loops, this.properties.connectTimeout())
			.baseUrl(HttpClients.baseUrl(url));
		return this.properties.secure() ? HttpClients.secure(client, this.ssl) : client;
	}

	/** The loops the proxy port's connections run on, as Reactor Netty's server asks. */
	private static EventLoop[] serverLoops(LoopResources loops) {
		List<EventLoop> found = new ArrayList<>();
		for (EventExecutor executor : loops.onServer(LoopResources.DEFAULT_NATIVE)) {
			found.add((EventLoop) executor);
		}
		return found.toArray(EventLoop[]::new);
	}

	/**
	 * Splits the bound over the loops: rounded down, the first {@code total % loops} one
	 * more, at least one each.
	 * @param total {@code max-connections}
	 * @param loops the number of loops
	 * @return each loop's bound
	 */
	static int[] shares(int total, int loops) {
		int[] shares = new int[loops];
		for (int i = 0; i < loops; i++) {
			shares[i] = Math.max(1, total / loops + ((i < total % loops) ? 1 : 0));
		}
		return shares;
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
		return clientOf(in).request(in.method()).uri(this.basePath + in.uri()).send((request, out) -> {
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
			return new UpstreamSaturatedException("All engine connections of this request's event loop (its share of "
					+ this.properties.maxConnections() + ", tokengap.upstream.max-connections, split over "
					+ this.loops.length + " event loops) stayed busy for " + this.properties.pendingAcquireTimeout()
					+ " (tokengap.upstream.pending-acquire-timeout); raise tokengap.upstream.max-connections", error);
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

	/** The client of the loop the client connection runs on. */
	private HttpClient clientOf(HttpServerRequest in) {
		if (in instanceof Connection connection) {
			EventLoop loop = connection.channel().eventLoop();
			for (int i = 0; i < this.loops.length; i++) {
				if (this.loops[i] == loop) {
					return this.clients[i];
				}
			}
		}
		return this.clients[0];
	}

	/**
	 * @return how long an engine may stay silent mid-body
	 */
	Duration idleTimeout() {
		return this.properties.idleTimeout();
	}

	/**
	 * The client for the engine's other endpoints ({@code /v1/models}, {@code /health}):
	 * the proxy's settings (loops, TLS, connect timeout) with a small pool of its own
	 * ({@value #INFO_POOL_NAME}), so that these never wait for, nor take, a connection
	 * the proxied requests need.
	 * @return the client
	 */
	public HttpClient http() {
		return this.info;
	}

	/**
	 * @return the bundle that trusts an {@code https://} engine, or null for the JVM's
	 * default trust
	 */
	public SslBundle sslBundle() {
		return this.ssl;
	}

	/**
	 * @return how many event loops, and so pools, the engine connections run on
	 */
	public int loops() {
		return this.loops.length;
	}

	/**
	 * @return the engine's base URL, without a trailing slash
	 */
	public String base() {
		return this.base;
	}

	/** Closes the engine connections. */
	public void close() {
		Flux.fromArray(this.pools)
			.concatWithValues(this.infoPool)
			.flatMap(ConnectionProvider::disposeLater)
			.then()
			.block(Duration.ofSeconds(5));
	}

}
