package dev.tokengap.config;

import java.time.Duration;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.netty.DisposableServer;

import org.springframework.boot.reactor.netty.NettyReactiveWebServerFactory;
import org.springframework.boot.web.server.Shutdown;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.SmartLifecycle;
import org.springframework.core.Ordered;

/**
 * The graceful shutdown of its context's Netty server (the proxy port's, or the
 * management port's in its child context), in place of Spring Boot's own.
 * <p>
 * Spring Boot's own (4.0.7,
 * {@code org.springframework.boot.reactor.netty.GracefulShutdown}) drains on a thread
 * that clears its {@code shutdownThread} and {@code shuttingDown} fields after it has
 * told the lifecycle the drain is complete; the server's {@code stop()} then calls
 * {@code abort()}, which reads the thread and waits, 50 ms at a time, for
 * {@code shuttingDown} to be true. When the drain thread clears both between those two
 * reads, {@code abort()} waits forever: a CI run of this project hung in it for ten
 * minutes, in a test context's pause, and a pod would hang in it until its kill.
 * <p>
 * So, as the last customizer of the factory, this takes the factory's shutdown setting
 * ({@code server.shutdown}) for itself and builds the server with Spring Boot's off; a
 * {@link reactor.netty.http.server.HttpServer#doOnBound doOnBound} hook tells it where
 * the server is bound. Its drain is the same as Spring Boot's, in the same lifecycle
 * phase: stop taking connections and wait for the active requests
 * ({@code DisposableServer.disposeNow}), for the shutdown phase's timeout
 * ({@code spring.lifecycle.timeout-per-shutdown-phase}) at most. The server's stop, one
 * phase later, is Spring Boot's, with no abort to hang in.
 */
final class ServerDrain implements SmartLifecycle, WebServerFactoryCustomizer<NettyReactiveWebServerFactory>, Ordered {

	private static final Log logger = LogFactory.getLog(ServerDrain.class);

	private final Duration timeout;

	private volatile boolean graceful;

	private volatile DisposableServer server;

	private volatile Thread drain;

	private volatile boolean running;

	/**
	 * @param timeout the longest wait for the active requests
	 */
	ServerDrain(Duration timeout) {
		this.timeout = timeout;
	}

	@Override
	public void customize(NettyReactiveWebServerFactory factory) {
		this.graceful = factory.getShutdown() == Shutdown.GRACEFUL;
		factory.setShutdown(Shutdown.IMMEDIATE);
		factory.addServerCustomizers((server) -> server.doOnBound(this::bound));
	}

	/** After every other customizer: the shutdown setting read is the final one. */
	@Override
	public int getOrder() {
		return Ordered.LOWEST_PRECEDENCE;
	}

	void bound(DisposableServer server) {
		this.server = server;
	}

	/**
	 * Whether {@code server.shutdown} asked for a graceful shutdown.
	 * @return true when a stop drains first
	 */
	boolean graceful() {
		return this.graceful;
	}

	/**
	 * The port of the server this drains, if it has started.
	 * @return the port, or -1
	 */
	int port() {
		DisposableServer bound = this.server;
		return (bound != null) ? bound.port() : -1;
	}

	@Override
	public void start() {
		this.running = true;
	}

	/** The drain, on a thread of its own; {@code callback} runs when it is over. */
	@Override
	public void stop(Runnable callback) {
		this.running = false;
		DisposableServer bound = this.server;
		this.server = null;
		if (!this.graceful || bound == null) {
			callback.run();
			return;
		}
		logger.info("Commencing graceful shutdown. Waiting for active requests to complete");
		Thread thread = new Thread(() -> drain(bound, callback), "netty-shutdown");
		this.drain = thread;
		thread.start();
	}

	private void drain(DisposableServer bound, Runnable callback) {
		try {
			bound.disposeNow(this.timeout);
			logger.info("Graceful shutdown complete");
		}
		catch (RuntimeException ex) {
			// disposeNow's own timeout, or stop() interrupting the wait
			logger.info("Graceful shutdown aborted with one or more requests still active");
		}
		finally {
			this.drain = null;
			callback.run();
		}
	}

	/** Ends a drain still running: the requests it waits for are left to the stop. */
	@Override
	public void stop() {
		this.running = false;
		Thread thread = this.drain;
		if (thread != null) {
			thread.interrupt();
		}
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	/**
	 * Not stopped when a context is paused (a test's cached context, say): the server
	 * keeps running then, as Spring Boot's own lifecycles of it leave it.
	 */
	@Override
	public boolean isPauseable() {
		return false;
	}

	/** Spring Boot's own graceful shutdown phase: before the server stops. */
	@Override
	public int getPhase() {
		return WebServerApplicationContext.GRACEFUL_SHUTDOWN_PHASE;
	}

}
