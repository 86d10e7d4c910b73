package dev.tokengap.config;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.netty.DisposableServer;

import org.springframework.boot.web.server.GracefulShutdownCallback;
import org.springframework.boot.web.server.GracefulShutdownResult;
import org.springframework.boot.web.server.WebServer;

/**
 * A Netty web server whose graceful shutdown cannot hang its stop.
 * <p>
 * Spring Boot's own (4.0.7,
 * {@code org.springframework.boot.reactor.netty.GracefulShutdown}) drains on a thread
 * that clears its {@code shutdownThread} and {@code shuttingDown} fields after it has
 * told the lifecycle the drain is complete; {@code stop()} then calls {@code abort()},
 * which reads the thread and waits, 50 ms at a time, for {@code shuttingDown} to be true.
 * When the drain thread clears both between those two reads, {@code abort()} waits
 * forever: a CI run of this project hung in it for ten minutes, in a test context's
 * pause, and a pod would hang in it until its kill.
 * <p>
 * So the server is Boot's, built with graceful shutdown off, and the drain is the same as
 * Boot's here: stop taking connections and wait, with no limit of its own, for the active
 * requests ({@code DisposableServer.disposeNow}), the shutdown phase's timeout bounding
 * it. {@link #stop()} interrupts a drain still running, then stops the server as Boot
 * does.
 */
final class DrainingWebServer implements WebServer {

	private static final Log logger = LogFactory.getLog(DrainingWebServer.class);

	private final WebServer server;

	private final AtomicReference<DisposableServer> bound;

	private volatile Thread drain;

	/**
	 * @param server the server, without graceful shutdown of its own
	 * @param bound where the server puts its bound channel when it starts
	 */
	DrainingWebServer(WebServer server, AtomicReference<DisposableServer> bound) {
		this.server = server;
		this.bound = bound;
	}

	@Override
	public void start() {
		this.server.start();
	}

	@Override
	public void shutDownGracefully(GracefulShutdownCallback callback) {
		DisposableServer channel = this.bound.get();
		if (channel == null) {
			callback.shutdownComplete(GracefulShutdownResult.IDLE);
			return;
		}
		logger.info("Commencing graceful shutdown. Waiting for active requests to complete");
		Thread thread = new Thread(() -> drain(channel, callback), "netty-shutdown");
		this.drain = thread;
		thread.start();
	}

	private void drain(DisposableServer channel, GracefulShutdownCallback callback) {
		try {
			channel.disposeNow(Duration.ofNanos(Long.MAX_VALUE));
			logger.info("Graceful shutdown complete");
			callback.shutdownComplete(GracefulShutdownResult.IDLE);
		}
		catch (Exception ex) {
			logger.info("Graceful shutdown aborted with one or more requests still active");
			callback.shutdownComplete(GracefulShutdownResult.REQUESTS_ACTIVE);
		}
	}

	@Override
	public void stop() {
		Thread thread = this.drain;
		if (thread != null) {
			// interrupting a thread that has ended, or not begun to wait, is harmless: a
			// wait begun after it returns at once
			thread.interrupt();
			this.drain = null;
		}
		this.bound.set(null);
		this.server.stop();
	}

	@Override
	public int getPort() {
		return this.server.getPort();
	}

	@Override
	public void destroy() {
		this.server.destroy();
	}

}
