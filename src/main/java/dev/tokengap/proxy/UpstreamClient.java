package dev.tokengap.proxy;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFuture;
import io.netty.channel.EventLoop;
import io.netty.channel.socket.DatagramChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.resolver.AddressResolverGroup;
import io.netty.resolver.dns.DnsAddressResolverGroup;
import io.netty.resolver.dns.DnsNameResolverBuilder;
import io.netty.util.AsciiString;
import io.netty.util.NetUtil;
import io.netty.util.concurrent.Future;
import reactor.netty.http.HttpResources;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.resources.LoopResources;

/**
 * Sends a client's request to the engine with the same method, path, query, end-to-end
 * headers and body bytes, and hands the response to a callback as soon as its headers
 * arrive.
 * <p>
 * Each event loop has its own connection pool ({@link EnginePool}), and its engine
 * connections run on that loop: an exchange's client and engine connections then share
 * one thread, so relaying a chunk never hands it to another loop (a task queue and an
 * eventfd wake-up per event, and a wait for the scheduler on a busy host). nginx keeps
 * its upstream keep-alive pools per worker for the same reason. The HTTP/1.1 client is
 * Netty's codec with a small exchange on top ({@link EngineExchange}): a request costs a
 * header copy, the request message and one task-free pass through the pool, where a
 * general-purpose client's connect chain and pool took a quarter of the event loops' time
 * at 2,000 requests/s (docs/performance.md, sessions 7 and 8).
 */
public final class UpstreamClient {

	private static final HopByHopHeaders NOT_FORWARDED = HopByHopHeaders.andAlso("host", "content-length",
			"x-forwarded-for", "x-forwarded-proto", "x-forwarded-host", "x-request-id");

	private static final AsciiString X_FORWARDED_FOR = AsciiString.cached("x-forwarded-for");

	private static final AsciiString X_FORWARDED_PROTO = AsciiString.cached("x-forwarded-proto");

	private static final AsciiString X_FORWARDED_HOST = AsciiString.cached("x-forwarded-host");

	private final Map<EventLoop, EnginePool> pools = new ConcurrentHashMap<>();

	private final int connectionsPerLoop;

	private final String base;

	private final String basePath;

	private final String host;

	private final SocketAddress remote;

	private final UpstreamProperties properties;

	private final long responseTimeoutNanos;

	private final long idleTimeoutNanos;

	private volatile DnsAddressResolverGroup resolver;

	/**
	 * Creates the client; its pools are made on first use, one per event loop.
	 * @param properties where the engine is and the timeouts
	 */
	public UpstreamClient(UpstreamProperties properties) {
		this.properties = properties;
		this.responseTimeoutNanos = properties.responseTimeout().toNanos();
		this.idleTimeoutNanos = properties.idleTimeout().toNanos();
		URI url = properties.url();
		String path = (url.getRawPath() == null) ? "" : url.getRawPath();
		this.basePath = path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
		this.base = url.getScheme() + "://" + url.getRawAuthority() + this.basePath;
		int port = (url.getPort() != -1) ? url.getPort() : 80;
		this.host = (port == 80) ? url.getHost() : url.getHost() + ":" + port;
		String hostName = url.getHost();
		if (hostName.startsWith("[") && hostName.endsWith("]")) {
			hostName = hostName.substring(1, hostName.length() - 1);
		}
		byte[] literal = NetUtil.createByteArrayFromIpAddressString(hostName);
		// an address (the sidecar's 127.0.0.1) needs no resolver; a name is resolved per
		// connect by Netty's DNS resolver, never by a blocking lookup on an event loop
		this.remote = (literal != null) ? new InetSocketAddress(address(literal), port)
				: InetSocketAddress.createUnresolved(hostName, port);
		this.connectionsPerLoop = Math.max(1, (properties.maxConnections() + LoopResources.DEFAULT_IO_WORKER_COUNT - 1)
				/ LoopResources.DEFAULT_IO_WORKER_COUNT);
	}

	private EnginePool poolOn(EventLoop loop) {
		EnginePool pool = this.pools.get(loop);
		return (pool != null) ? pool : this.pools.computeIfAbsent(loop, this::newPool);
	}

	private EnginePool newPool(EventLoop loop) {
		LoopResources loops = HttpResources.get();
		Class<? extends SocketChannel> channelType = loops.onChannelClass(SocketChannel.class, loop);
		AddressResolverGroup<?> resolver = ((InetSocketAddress) this.remote).isUnresolved() ? resolver(loops, loop)
				: null;
		return new EnginePool(loop, channelType, resolver, this.remote, this.properties, this.connectionsPerLoop);
	}

	private static InetAddress address(byte[] literal) {
		try {
			return InetAddress.getByAddress(literal);
		}
		catch (UnknownHostException ex) {
			throw new IllegalArgumentException("not an IP address", ex);
		}
	}

	/** Resolves the engine's host name without blocking an event loop (Netty's DNS). */
	private DnsAddressResolverGroup resolver(LoopResources loops, EventLoop loop) {
		DnsAddressResolverGroup group = this.resolver;
		if (group == null) {
			synchronized (this) {
				group = this.resolver;
				if (group == null) {
					group = new DnsAddressResolverGroup(new DnsNameResolverBuilder()
						.datagramChannelType(loops.onChannelClass(DatagramChannel.class, loop)));
					this.resolver = group;
				}
			}
		}
		return group;
	}

	/**
	 * Prepares a request to the engine, to be sent by {@link EngineExchange#start()} on
	 * the loop.
	 * @param in the client's request (method, URI, headers)
	 * @param loop the client connection's event loop, which the engine connection will
	 * run on
	 * @param body the body bytes read from the client (not released here; the exchange
	 * keeps a reference of its own)
	 * @param requestId the request id to send as {@code X-Request-Id}
	 * @param listener told on the loop of the response head or of the failure before it
	 * ({@link UpstreamUnavailableException}, {@link UpstreamSaturatedException} or
	 * {@link UpstreamTimeoutException})
	 * @return the exchange, to start, then to cancel before its response or abandon, all
	 * on the loop
	 */
	EngineExchange prepare(HttpServerRequest in, EventLoop loop, ByteBuf body, String requestId,
			EngineExchange.Listener listener) {
		HttpHeaders headers = new DefaultHttpHeaders();
		headers.set(HttpHeaderNames.HOST, this.host);
		NOT_FORWARDED.copy(in.requestHeaders(), headers);
		forwarded(in, headers);
		headers.set(ProxyExchange.X_REQUEST_ID, requestId);
		if (hasBody(in, body)) {
			headers.set(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
		}
		return new EngineExchange(this, poolOn(loop), in.method(), this.basePath + in.uri(), headers, body, listener);
	}

	long responseTimeoutNanos() {
		return this.responseTimeoutNanos;
	}

	long idleTimeoutNanos() {
		return this.idleTimeoutNanos;
	}

	private static boolean hasBody(HttpServerRequest in, ByteBuf body) {
		return body.isReadable() || in.requestHeaders().contains(HttpHeaderNames.CONTENT_LENGTH)
				|| in.requestHeaders().contains(HttpHeaderNames.TRANSFER_ENCODING);
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
		if (error instanceof UpstreamSaturatedException || error instanceof UpstreamUnavailableException) {
			return error;
		}
		if (error instanceof TimeoutException) {
			return new UpstreamTimeoutException("The engine sent no response headers within "
					+ this.properties.responseTimeout() + " (tokengap.upstream.response-timeout)");
		}
		if (error instanceof DecoderException) {
			return new UpstreamUnavailableException(
					"The engine at " + this.base + " sent an invalid response: " + error.getMessage()
							+ ((error.getCause() != null) ? " (" + error.getCause().getMessage() + ")" : ""),
					error);
		}
		if (error instanceof ConnectException || error instanceof IOException) {
			return new UpstreamUnavailableException("The engine at " + this.base + " is unreachable: "
					+ error.getClass().getSimpleName() + (error.getMessage() != null ? ": " + error.getMessage() : ""),
					error);
		}
		if (error instanceof IllegalStateException) {
			return new UpstreamUnavailableException(
					"The engine at " + this.base + " cannot be reached: " + error.getMessage(), error);
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
		List<Future<?>> closing = new ArrayList<>();
		for (EnginePool pool : this.pools.values()) {
			if (pool.loop().isShuttingDown()) {
				continue;
			}
			if (pool.loop().inEventLoop()) {
				closing.addAll(pool.close());
				continue;
			}
			try {
				List<ChannelFuture> futures = pool.loop().submit(pool::close).get(5, TimeUnit.SECONDS);
				closing.addAll(futures);
			}
			catch (Exception ex) {
				// the loop is gone: so are its connections
			}
		}
		for (Future<?> future : closing) {
			future.awaitUninterruptibly(5, TimeUnit.SECONDS);
		}
		DnsAddressResolverGroup group = this.resolver;
		if (group != null) {
			group.close();
		}
	}

}
