package dev.tokengap.proxy;

import java.net.SocketAddress;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.resolver.AddressResolverGroup;

/**
 * The engine connections of one event loop, used only from that loop: idle keep-alive
 * connections (the most recently used first), a bound on how many may be open, and the
 * requests waiting for one when all are busy.
 * <p>
 * Because the pool belongs to the loop of the client connections it serves, taking and
 * returning a connection is a deque operation on one thread: no lock, no atomic, no task.
 * An idle connection older than the max idle time is closed by a sweep that runs a few
 * times per max idle time, and is never handed out: the engine's own keep-alive timeout
 * (uvicorn's is 5 s) must not close a connection under a request that was just sent on
 * it.
 */
final class EnginePool {

	/** The engine connections' HTTP codec, in their pipelines. */
	static final String CODEC = "tokengap.httpCodec";

	private final EventLoop loop;

	private final Bootstrap bootstrap;

	private final SocketAddress remote;

	private final int maxConnections;

	private final long maxIdleNanos;

	private final long pendingAcquireNanos;

	private final int configuredMaxConnections;

	private final ArrayDeque<EngineConnection> idle = new ArrayDeque<>();

	private final ArrayDeque<EngineExchange> waiting = new ArrayDeque<>();

	private final Set<Channel> open = new HashSet<>();

	private final ScheduledFuture<?> sweep;

	private int connecting;

	private boolean closed;

	/**
	 * Creates the pool of one loop.
	 * @param loop the loop
	 * @param channelType the loop's socket channel class
	 * @param resolver resolves the engine's name, or null when {@code remote} is resolved
	 * @param remote the engine's address
	 * @param properties the timeouts and limits
	 * @param maxConnections the bound on this loop's connections
	 */
	EnginePool(EventLoop loop, Class<? extends SocketChannel> channelType, AddressResolverGroup<?> resolver,
			SocketAddress remote, UpstreamProperties properties, int maxConnections) {
		this.loop = loop;
		this.remote = remote;
		this.maxConnections = maxConnections;
		this.maxIdleNanos = properties.maxIdleTime().toNanos();
		this.pendingAcquireNanos = properties.pendingAcquireTimeout().toNanos();
		this.configuredMaxConnections = properties.maxConnections();
		this.bootstrap = new Bootstrap().group(loop)
			.channel(channelType)
			.option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) properties.connectTimeout().toMillis())
			.option(ChannelOption.TCP_NODELAY, true)
			.handler(new ChannelInitializer<Channel>() {
				@Override
				protected void initChannel(Channel channel) {
					UpstreamTimeouts timeouts = UpstreamTimeouts.install(channel);
					channel.pipeline().addLast(CODEC, new HttpClientCodec());
					channel.pipeline()
						.addLast(EngineConnection.NAME, new EngineConnection(EnginePool.this, channel, timeouts));
				}
			});
		if (resolver != null) {
			this.bootstrap.resolver(resolver);
		}
		else {
			this.bootstrap.disableResolver();
		}
		long sweepNanos = Math.max(this.maxIdleNanos / 4, TimeUnit.MILLISECONDS.toNanos(10));
		this.sweep = loop.scheduleWithFixedDelay(this::sweep, sweepNanos, sweepNanos, TimeUnit.NANOSECONDS);
	}

	EventLoop loop() {
		return this.loop;
	}

	/**
	 * Finds a connection for the exchange: an idle one, a new one, or the first to become
	 * free within the pending acquire timeout. On the loop.
	 * @param exchange the exchange that wants a connection
	 */
	void acquire(EngineExchange exchange) {
		if (this.closed) {
			exchange.acquireFailed(new IllegalStateException("tokengap is shutting down"));
			return;
		}
		long now = System.nanoTime();
		EngineConnection connection;
		while ((connection = this.idle.pollFirst()) != null) {
			if (connection.channel().isActive() && now - connection.idleSinceNanos() < this.maxIdleNanos) {
				exchange.send(connection);
				return;
			}
			connection.channel().close();
		}
		if (this.open.size() + this.connecting < this.maxConnections) {
			connect(exchange);
			return;
		}
		this.waiting.addLast(exchange);
		exchange.awaitConnection(
				this.loop.schedule(() -> acquireTimedOut(exchange), this.pendingAcquireNanos, TimeUnit.NANOSECONDS));
	}

	private void connect(EngineExchange exchange) {
		this.connecting++;
		ChannelFuture future = this.bootstrap.connect(this.remote);
		future.addListener((done) -> {
			this.connecting--;
			if (!future.isSuccess()) {
				exchange.acquireFailed(future.cause());
				serveWaiting();
				return;
			}
			Channel channel = future.channel();
			if (this.closed) {
				channel.close();
				exchange.acquireFailed(new IllegalStateException("tokengap is shutting down"));
				return;
			}
			this.open.add(channel);
			exchange.send((EngineConnection) channel.pipeline().get(EngineConnection.NAME));
		});
	}

	private void acquireTimedOut(EngineExchange exchange) {
		if (this.waiting.remove(exchange)) {
			exchange.acquireFailed(new UpstreamSaturatedException("All " + this.maxConnections
					+ " engine connections of this event loop stayed busy for "
					+ TimeUnit.NANOSECONDS.toMillis(this.pendingAcquireNanos)
					+ " ms (tokengap.upstream.pending-acquire-timeout); raise tokengap.upstream.max-connections (now "
					+ this.configuredMaxConnections + ", split across the event loops)", null));
		}
	}

	/**
	 * A waiting exchange no longer wants a connection (its client went away). On the
	 * loop.
	 * @param exchange the exchange
	 */
	void forget(EngineExchange exchange) {
		this.waiting.remove(exchange);
	}

	/**
	 * An exchange has read its whole response: the connection serves the next waiting
	 * request, or waits for one. On the loop.
	 * @param connection a connection whose exchange is over and whose request was written
	 * whole
	 */
	void release(EngineConnection connection) {
		if (this.closed || !connection.channel().isActive()) {
			connection.channel().close();
			return;
		}
		EngineExchange next = this.waiting.pollFirst();
		if (next != null) {
			next.send(connection);
			return;
		}
		connection.idleSince(System.nanoTime());
		this.idle.addFirst(connection);
	}

	/**
	 * A connection closed. On the loop.
	 * @param connection the connection
	 */
	void closed(EngineConnection connection) {
		this.open.remove(connection.channel());
		this.idle.remove(connection);
		serveWaiting();
	}

	private void serveWaiting() {
		if (!this.closed && !this.waiting.isEmpty() && this.open.size() + this.connecting < this.maxConnections) {
			connect(this.waiting.pollFirst());
		}
	}

	private void sweep() {
		long now = System.nanoTime();
		// the oldest are last
		Iterator<EngineConnection> oldest = this.idle.descendingIterator();
		while (oldest.hasNext()) {
			EngineConnection connection = oldest.next();
			if (now - connection.idleSinceNanos() < this.maxIdleNanos) {
				return;
			}
			oldest.remove();
			connection.channel().close();
		}
	}

	/**
	 * Closes every connection and fails the waiting requests. On the loop.
	 * @return the close futures
	 */
	List<ChannelFuture> close() {
		this.closed = true;
		this.sweep.cancel(false);
		EngineExchange exchange;
		while ((exchange = this.waiting.pollFirst()) != null) {
			exchange.acquireFailed(new IllegalStateException("tokengap is shutting down"));
		}
		this.idle.clear();
		List<ChannelFuture> futures = new ArrayList<>();
		for (Channel channel : new ArrayList<>(this.open)) {
			futures.add(channel.close());
		}
		return futures;
	}

}
