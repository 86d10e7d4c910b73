package dev.tokengap.proxy;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeoutException;
import java.util.function.BiFunction;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.ConnectTimeoutException;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.Connection;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.client.HttpClientResponse;
import reactor.netty.http.client.PrematureCloseException;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.resources.ConnectionProvider;
import reactor.netty.resources.LoopResources;

/**
 * Sends a client's request to the engine with the same method, path, query, end-to-end
 * headers and body bytes, and hands the response to a callback as soon as its headers
 * arrive.
 * <p>
 * Each event loop has its own connection pool, and its upstream connections run on that
 * loop: an exchange's client and engine connections then share one thread, so relaying a
 * chunk never hands it to another loop (a task queue and an eventfd wake-up per event,
 * and a wait for the scheduler on a busy host). nginx keeps its upstream keep-alive pools
 * per worker for the same reason.
 */
public final class UpstreamClient {

	private static final Set<String> NOT_FORWARDED = Set.of("host", "content-length", "x-forwarded-for",
			"x-forwarded-proto", "x-forwarded-host", "x-request-id");

	private final Map<EventLoop, HttpClient> clients = new ConcurrentHashMap<>();

	private final List<ConnectionProvider> providers = new CopyOnWriteArrayList<>();

	private final int connectionsPerLoop;

	private final String base;

	private final UpstreamProperties properties;

	private final long responseTimeoutNanos;

	private final long idleTimeoutNanos;

	/**
	 * Creates the client and its connection pool.
	 * @param properties where the engine is and the timeouts
	 */
	public UpstreamClient(UpstreamProperties properties) {
		this.properties = properties;
		this.responseTimeoutNanos = properties.responseTimeout().toNanos();
		this.idleTimeoutNanos = properties.idleTimeout().toNanos();
		URI url = properties.url();
		String path = (url.getRawPath() == null) ? "" : url.getRawPath();
		this.base = url.getScheme() + "://" + url.getRawAuthority()
				+ (path.endsWith("/") ? path.substring(0, path.length() - 1) : path);
		this.connectionsPerLoop = Math.max(1, (properties.maxConnections() + LoopResources.DEFAULT_IO_WORKER_COUNT - 1)
				/ LoopResources.DEFAULT_IO_WORKER_COUNT);
	}

	private HttpClient clientOn(EventLoop loop) {
		HttpClient client = this.clients.get(loop);
		return (client != null) ? client : this.clients.computeIfAbsent(loop, this::newClient);
	}

	private HttpClient newClient(EventLoop loop) {
		ConnectionProvider provider = ConnectionProvider.builder("tokengap-upstream-" + this.providers.size())
			.maxConnections(this.connectionsPerLoop)
			.pendingAcquireMaxCount(-1)
			// Reactor Netty's default (45 s) would surface as a 504 long after the real
			// cause
			.pendingAcquireTimeout(this.properties.pendingAcquireTimeout())
			.maxIdleTime(this.properties.maxIdleTime())
			// Without a background sweep an idle connection is only closed when next
			// acquired:
			// after a burst, hundreds stayed open long past max-idle-time.
			.evictInBackground(this.properties.maxIdleTime())
			.build();
		this.providers.add(provider);
		return HttpClient.create(provider)
			.runOn(loop)
			.option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) this.properties.connectTimeout().toMillis())
			.keepAlive(true)
			.compress(false)
			.followRedirect(false)
			.doOnChannelInit((observer, channel, address) -> UpstreamTimeouts.install(channel))
			// Never replay a request the engine may have started (a retried POST would
			// generate twice).
			.disableRetry(true);
	}

	/**
	 * Forwards a request.
	 * @param in the client's request (method, URI, headers)
	 * @param loop the client connection's event loop, which the engine connection will
	 * run on
	 * @param body the body bytes read from the client (not released here)
	 * @param requestId the request id to send as {@code X-Request-Id}
	 * @param onResponse called on the upstream connection's loop when the response
	 * headers arrive; its Mono completes when the whole exchange has an outcome
	 * @return completes with the exchange; errors before the response headers are
	 * {@link UpstreamUnavailableException} or {@link UpstreamTimeoutException}
	 */
	Mono<Void> exchange(HttpServerRequest in, EventLoop loop, ByteBuf body, String requestId,
			BiFunction<HttpClientResponse, Connection, Mono<Void>> onResponse) {
		HttpMethod method = in.method();
		Deadlines deadlines = new Deadlines();
		return clientOn(loop).request(method).uri(this.base + in.uri()).send((request, out) -> {
			deadlines.begin(((Connection) request).channel(), this.responseTimeoutNanos);
			HttpHeaders headers = request.requestHeaders();
			String host = headers.get(HttpHeaderNames.HOST);
			headers.clear();
			headers.set(HttpHeaderNames.HOST, host);
			HopByHopHeaders.copy(in.requestHeaders(), headers, NOT_FORWARDED);
			forwarded(in, headers);
			headers.set("x-request-id", requestId);
			if (!hasBody(in, body)) {
				return out;
			}
			headers.set(HttpHeaderNames.CONTENT_LENGTH, Integer.toString(body.readableBytes()));
			return out.send(Mono.fromSupplier(body::retainedDuplicate));
		}).responseConnection((response, connection) -> {
			deadlines.headersIn(this.idleTimeoutNanos);
			return onResponse.apply(response, connection);
		}).onErrorMap(this::beforeResponse).doFinally((signal) -> deadlines.done()).then();
	}

	/** One request's deadlines on the connection it was sent on. */
	private static final class Deadlines {

		private UpstreamTimeouts timeouts;

		private long ticket;

		void begin(Channel channel, long responseTimeoutNanos) {
			this.timeouts = UpstreamTimeouts.of(channel);
			this.ticket = this.timeouts.awaitHeaders(responseTimeoutNanos);
		}

		void headersIn(long idleTimeoutNanos) {
			this.timeouts.headersIn(this.ticket, idleTimeoutNanos);
		}

		void done() {
			if (this.timeouts != null) {
				this.timeouts.done(this.ticket);
			}
		}

	}

	private static boolean hasBody(HttpServerRequest in, ByteBuf body) {
		return body.isReadable() || in.requestHeaders().contains(HttpHeaderNames.CONTENT_LENGTH)
				|| in.requestHeaders().contains(HttpHeaderNames.TRANSFER_ENCODING);
	}

	private static void forwarded(HttpServerRequest in, HttpHeaders headers) {
		String client = address(in.remoteAddress());
		String prior = in.requestHeaders().get("x-forwarded-for");
		headers.set("x-forwarded-for", (prior == null || prior.isBlank()) ? client : prior + ", " + client);
		String proto = in.requestHeaders().get("x-forwarded-proto");
		headers.set("x-forwarded-proto", (proto != null) ? proto : in.scheme());
		String host = in.requestHeaders().get("x-forwarded-host");
		String clientHost = in.requestHeaders().get(HttpHeaderNames.HOST);
		if (host != null) {
			headers.set("x-forwarded-host", host);
		}
		else if (clientHost != null) {
			headers.set("x-forwarded-host", clientHost);
		}
	}

	private static String address(SocketAddress address) {
		if (address instanceof InetSocketAddress inet && inet.getAddress() != null) {
			return inet.getAddress().getHostAddress();
		}
		return "unknown";
	}

	private Throwable beforeResponse(Throwable error) {
		// Reactor Netty's (shaded) PoolAcquireTimeoutException is a TimeoutException too
		if (error.getClass().getSimpleName().equals("PoolAcquireTimeoutException")) {
			return new UpstreamSaturatedException("All " + this.connectionsPerLoop
					+ " engine connections of this event loop stayed busy for "
					+ this.properties.pendingAcquireTimeout() + " (tokengap.upstream.pending-acquire-timeout); raise"
					+ " tokengap.upstream.max-connections (now " + this.properties.maxConnections()
					+ ", split across the event loops)", error);
		}
		if (error instanceof TimeoutException) {
			return new UpstreamTimeoutException("The engine sent no response headers within "
					+ this.properties.responseTimeout() + " (tokengap.upstream.response-timeout)");
		}
		if (error instanceof ConnectException || error instanceof PrematureCloseException
				|| error instanceof ConnectTimeoutException || error instanceof IOException) {
			return new UpstreamUnavailableException("The engine at " + this.base + " is unreachable: "
					+ error.getClass().getSimpleName() + (error.getMessage() != null ? ": " + error.getMessage() : ""),
					error);
		}
		return error;
	}

	/**
	 * @return the engine's base URL, without a trailing slash
	 */
	public String base() {
		return this.base;
	}

	/** Closes the connection pools. */
	public void close() {
		Flux.fromIterable(this.providers).flatMap(ConnectionProvider::disposeLater).then().block(Duration.ofSeconds(5));
	}

}
