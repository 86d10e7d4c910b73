package dev.tokengap.backend;

import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import javax.net.ssl.SSLException;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollDatagramChannel;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.DatagramChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioDatagramChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.resolver.dns.DnsAddressResolverGroup;
import io.netty.resolver.dns.DnsNameResolverBuilder;
import io.netty.util.NetUtil;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.FastThreadLocalThread;
import io.netty.util.concurrent.ScheduledFuture;
import reactor.core.publisher.Mono;

import org.springframework.util.unit.DataSize;

/**
 * The scraper's HTTP/1.1 client: Netty's codec on one event loop of its own
 * ({@code tokengap-scrape}), which also runs the scraper's timer, and one kept-alive
 * connection reused from scrape to scrape.
 *
 * <p>
 * A scrape costs a write, a read and the parse, with no thread hop, no Reactor operators
 * and no connection pool: at four scrapes a second, Reactor Netty's client cost more CPU
 * than the whole proxy spends on some requests (the client's machinery ran mostly
 * interpreted, being called too rarely to be compiled). Its own thread keeps the parse of
 * a large {@code /metrics} body off the proxy's loops.
 *
 * <p>
 * Every fetch ends in exactly one callback, on the client's loop: the body, or the
 * failure (a status other than 200, a body over the cap, the timeout, the network's
 * exception, or the client's close). A failure closes its connection; an idle connection
 * closes after 4 s, before uvicorn's 5 s keep-alive would, and a kept-alive connection
 * the engine closed before answering is replaced once by a new one.
 */
final class MetricsClient implements AutoCloseable {

	/** How one fetch ends: exactly one call, on the client's loop. */
	interface Callback {

		/**
		 * The whole body has arrived.
		 * @param body the buffer given to {@link #fetch}, holding the body
		 */
		void succeeded(ScrapeBody body);

		/**
		 * The fetch failed.
		 * @param ex what went wrong: {@link ScrapeFailedException},
		 * {@link TimeoutException} or the network's exception
		 */
		void failed(Throwable ex);

	}

	private static final long IDLE_NANOS = Duration.ofSeconds(4).toNanos();

	private static final Duration CLOSE_WAIT = Duration.ofSeconds(2);

	private final String host;

	private final int port;

	private final String target;

	private final String hostHeader;

	private final DataSize maxSize;

	private final EventLoopGroup group;

	private final EventLoop loop;

	private final Bootstrap bootstrap;

	private final InetSocketAddress remote;

	private final DnsAddressResolverGroup resolver;

	// The fields below are read and written on the loop only.

	private Channel idle;

	private long idleSince;

	private final List<Exchange> open = new ArrayList<>(2);

	private boolean closed;

	MetricsClient(URI url, Duration connectTimeout, DataSize maxSize) {
		this(url, connectTimeout, maxSize, null);
	}

	/**
	 * @param url the metrics URL, {@code http} or {@code https}
	 * @param connectTimeout the longest wait for a connection
	 * @param maxSize the cap on a body's size
	 * @param ssl the TLS context for an {@code https} URL, or null for the JDK's trust
	 * store with host name verification
	 */
	MetricsClient(URI url, Duration connectTimeout, DataSize maxSize, SslContext ssl) {
		boolean https = "https".equalsIgnoreCase(url.getScheme());
		String rawHost = url.getHost();
		this.host = (rawHost.startsWith("[") && rawHost.endsWith("]")) ? rawHost.substring(1, rawHost.length() - 1)
				: rawHost;
		this.port = (url.getPort() != -1) ? url.getPort() : (https ? 443 : 80);
		this.hostHeader = (url.getPort() != -1) ? rawHost + ":" + url.getPort() : rawHost;
		String path = (url.getRawPath() == null || url.getRawPath().isEmpty()) ? "/" : url.getRawPath();
		this.target = (url.getRawQuery() != null) ? path + "?" + url.getRawQuery() : path;
		this.maxSize = maxSize;
		boolean epoll = Epoll.isAvailable()
				&& !"false".equalsIgnoreCase(System.getProperty("reactor.netty.native", "true").trim());
		IoHandlerFactory io = epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
		this.group = new MultiThreadIoEventLoopGroup(1, threadFactory(), io);
		this.loop = this.group.next();
		SslContext tls = https ? ((ssl != null) ? ssl : defaultTls()) : null;
		this.bootstrap = new Bootstrap().group(this.loop)
			.channel(epoll ? EpollSocketChannel.class : NioSocketChannel.class)
			.option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.max(1, connectTimeout.toMillis()))
			.option(ChannelOption.TCP_NODELAY, true)
			.handler(new ChannelInitializer<SocketChannel>() {

				@Override
				protected void initChannel(SocketChannel channel) {
					if (tls != null) {
						channel.pipeline()
							.addLast(tls.newHandler(channel.alloc(), MetricsClient.this.host, MetricsClient.this.port));
					}
					channel.pipeline().addLast(new HttpClientCodec()).addLast(new ResponseReader());
				}

			});
		byte[] literal = NetUtil.createByteArrayFromIpAddressString(this.host);
		if (literal != null) {
			this.remote = new InetSocketAddress(NetUtil.createInetAddressFromIpAddressString(this.host), this.port);
			this.resolver = null;
		}
		else {
			// Netty's DNS (with /etc/hosts and resolv.conf's search list), never a
			// blocking
			// lookup on the loop, which would also hold off the timeout.
			this.remote = InetSocketAddress.createUnresolved(this.host, this.port);
			Class<? extends DatagramChannel> datagrams = epoll ? EpollDatagramChannel.class : NioDatagramChannel.class;
			this.resolver = new DnsAddressResolverGroup(new DnsNameResolverBuilder().datagramChannelType(datagrams));
			this.bootstrap.resolver(this.resolver);
		}
	}

	private static SslContext defaultTls() {
		try {
			return SslContextBuilder.forClient().endpointIdentificationAlgorithm("HTTPS").build();
		}
		catch (SSLException ex) {
			throw new IllegalStateException("Could not set up TLS for the metrics URL", ex);
		}
	}

	private static ThreadFactory threadFactory() {
		return (runnable) -> {
			Thread thread = new FastThreadLocalThread(runnable, "tokengap-scrape");
			thread.setDaemon(true);
			return thread;
		};
	}

	/** The loop every callback runs on, which can also run the scraper's timer. */
	EventLoop loop() {
		return this.loop;
	}

	/**
	 * Reads the body into the buffer, which the client resets when the response head has
	 * arrived; the callback is told on the client's loop.
	 * @param into the buffer, whose cap must be the client's
	 * @param timeout the longest the whole fetch may take
	 * @param callback told exactly once
	 */
	void fetch(ScrapeBody into, Duration timeout, Callback callback) {
		Exchange exchange = new Exchange(into, timeout, callback);
		if (this.loop.inEventLoop()) {
			exchange.start();
			return;
		}
		try {
			this.loop.execute(exchange::start);
		}
		catch (RejectedExecutionException ex) {
			callback.failed(new ScrapeFailedException("client closed"));
		}
	}

	/**
	 * {@link #fetch} as a {@link Mono} of the body's text, for start-up.
	 * @param into the buffer, whose cap must be the client's
	 * @param timeout the longest the whole fetch may take
	 * @return the body as text
	 */
	Mono<String> fetch(ScrapeBody into, Duration timeout) {
		return Mono.create((sink) -> fetch(into, timeout, new Callback() {

			@Override
			public void succeeded(ScrapeBody body) {
				sink.success(body.text());
			}

			@Override
			public void failed(Throwable ex) {
				sink.error(ex);
			}

		}));
	}

	private FullHttpRequest request() {
		FullHttpRequest request = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, this.target,
				Unpooled.EMPTY_BUFFER);
		request.headers()
			.set(HttpHeaderNames.HOST, this.hostHeader)
			.set(HttpHeaderNames.ACCEPT, "text/plain")
			.set(HttpHeaderNames.USER_AGENT, "tokengap");
		// No Accept-Encoding: the size cap must count the bytes actually held.
		return request;
	}

	private Channel takeIdle() {
		Channel channel = this.idle;
		this.idle = null;
		if (channel != null)
			if (channel != null && (!channel.isActive() || System.nanoTime() - this.idleSince >= IDLE_NANOS)) {
				channel.close();
				return null;
			}
		return channel;
	}

	private void keep(Channel channel) {
		if (!this.closed && this.idle == null && channel.isActive()) {
			this.idle = channel;
			this.idleSince = System.nanoTime();
		}
		else {
			channel.close();
		}
	}

	private ScrapeFailedException tooBig() {
		return new ScrapeFailedException("body exceeds max-scrape-size " + this.maxSize);
	}

	/**
	 * Stops the client: a fetch in flight fails with "client closed", the connections
	 * close and the loop ends (waited for up to 2 s, unless called on the loop).
	 */
	@Override
	public void close() {
		try {
			this.loop.execute(() -> {
				this.closed = true;
				for (Exchange exchange : List.copyOf(this.open)) {
					exchange.fail(new ScrapeFailedException("client closed"));
				}
				if (this.idle != null) {
					this.idle.close();
					this.idle = null;
				}
			});
		}
		catch (RejectedExecutionException ex) {
			// already closed
		}
		io.netty.util.concurrent.Future<?> terminated = this.group.shutdownGracefully(0, CLOSE_WAIT.toMillis(),
				TimeUnit.MILLISECONDS);
		if (this.resolver != null) {
			this.resolver.close();
		}
		if (!this.loop.inEventLoop()) {
			terminated.awaitUninterruptibly(CLOSE_WAIT.toMillis() + 500);
		}
	}

	/** One fetch, from its start to its one callback; used on the loop only. */
	private final class Exchange {

		private final ScrapeBody into;

		private final Duration timeout;

		private final Callback callback;

		private ScheduledFuture<?> timer;

		private Channel channel;

		private boolean reused;

		private boolean retried;

		private boolean responded;

		private boolean keepAlive;

		private boolean done;

		Exchange(ScrapeBody into, Duration timeout, Callback callback) {
			this.into = into;
			this.timeout = timeout;
			this.callback = callback;
		}

		void start() {
			if (MetricsClient.this.closed) {
				this.done = true;
				this.callback.failed(new ScrapeFailedException("client closed"));
				return;
			}
			MetricsClient.this.open.add(this);
			this.timer = MetricsClient.this.loop.schedule(
					() -> fail(new TimeoutException("no answer within " + this.timeout.toMillis() + "ms")),
					this.timeout.toNanos(), TimeUnit.NANOSECONDS);
			Channel kept = takeIdle();
			if (kept != null) {
				send(kept, true);
			}
			else {
				connect();
			}
		}

		private void connect() {
			MetricsClient.this.bootstrap.connect(MetricsClient.this.remote).addListener((ChannelFuture connected) -> {
				if (!connected.isSuccess()) {
					fail(connected.cause());
				}
				else if (this.done) {
					connected.channel().close();
				}
				else {
					send(connected.channel(), false);
				}
			});
		}

		private void send(Channel channel, boolean kept) {
			this.channel = channel;
			this.reused = kept;
			channel.pipeline().get(ResponseReader.class).current = this;
			channel.writeAndFlush(request()).addListener((written) -> {
				if (!written.isSuccess()) {
					lost(channel, written.cause());
				}
			});
		}

		/** The connection failed or closed before this exchange ended. */
		void lost(Channel on, Throwable cause) {
			if (this.done || on != this.channel) {
				return;
			}
			if (this.reused && !this.responded && !this.retried) {
				// The engine closed a kept-alive connection as the request went out:
				// nothing was answered, so ask again on a new one.
				this.retried = true;
				on.close();
				detach();
				connect();
				return;
			}
			fail(cause);
		}

		void head(HttpResponse response) {
			this.responded = true;
			int status = response.status().code();
			if (status != 200) {
				fail(new ScrapeFailedException("HTTP " + status));
				return;
			}
			long declared = HttpUtil.getContentLength(response, -1L);
			if (declared > MetricsClient.this.maxSize.toBytes()) {
				fail(tooBig());
				return;
			}
			this.keepAlive = HttpUtil.isKeepAlive(response);
			this.into.reset();
		}

		void content(HttpContent content) {
			if (!this.into.append(content.content())) {
				fail(tooBig());
				return;
			}
			if (content instanceof LastHttpContent) {
				succeed();
			}
		}

		private void succeed() {
			end();
			Channel used = detach();
			if (this.keepAlive) {
				keep(used);
			}
			else {
				used.close();
			}
			this.callback.succeeded(this.into);
		}

		void fail(Throwable cause) {
			if (this.done) {
				return;
			}
			end();
			Channel used = detach();
			if (used != null) {
				// What is left of the response is unknown: the connection cannot be
				// reused.
				used.close();
			}
			this.callback.failed(cause);
		}

		private void end() {
			this.done = true;
			if (this.timer != null) {
				this.timer.cancel(false);
			}
			MetricsClient.this.open.remove(this);
		}

		private Channel detach() {
			Channel used = this.channel;
			this.channel = null;
			if (used != null) {
				ResponseReader reader = used.pipeline().get(ResponseReader.class);
				if (reader != null && reader.current == this) {
					reader.current = null;
				}
			}
			return used;
		}

	}

	/**
	 * Hands each response part to the connection's current exchange; releases them all.
	 */
	private static final class ResponseReader extends ChannelInboundHandlerAdapter {

		Exchange current;

		@Override
		public void channelRead(ChannelHandlerContext ctx, Object msg) {
			try {
				Exchange exchange = this.current;
				if (exchange == null) {
					// Nothing asked for it: the connection's state is unknown.
					ctx.close();
					return;
				}
				if (msg instanceof HttpObject object && object.decoderResult().isFailure()) {
					exchange.fail(new ScrapeFailedException("malformed response: " + object.decoderResult().cause()));
					return;
				}
				if (msg instanceof HttpResponse response) {
					exchange.head(response);
				}
				if (msg instanceof HttpContent content && this.current == exchange) {
					exchange.content(content);
				}
			}
			finally {
				ReferenceCountUtil.release(msg);
			}
		}

		@Override
		public void channelInactive(ChannelHandlerContext ctx) {
			Exchange exchange = this.current;
			if (exchange != null) {
				exchange.lost(ctx.channel(), new ScrapeFailedException("connection closed before the response ended"));
			}
			ctx.fireChannelInactive();
		}

		@Override
		public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
			Exchange exchange = this.current;
			if (exchange != null) {
				exchange.lost(ctx.channel(), cause);
			}
			ctx.close();
		}

	}

}
