package dev.tokengap.proxy;

import java.time.Duration;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.util.concurrent.FastThreadLocalThread;

import reactor.core.publisher.Mono;
import reactor.netty.http.HttpResources;
import reactor.netty.resources.LoopResources;

/**
 * The proxy port's event loops ({@code tokengap-epoll-N}, one per processor unless
 * {@code reactor.netty.ioWorkerCount} says otherwise): Netty's epoll loops with each
 * channel's interest changes deferred to the loop's next wait
 * ({@link DeferredInterestIoHandler}), which saves Reactor Netty's server two
 * {@code epoll_ctl} calls per request. The engine connections of a request run on its
 * client connection's loop, so they are these loops too. Where epoll is not available, or
 * with {@code -Dtokengap.netty.deferInterest=false}, these resources hand out Reactor
 * Netty's own loops ({@link HttpResources}) instead.
 */
public final class ProxyEventLoops implements LoopResources {

	/** The switch: {@code -Dtokengap.netty.deferInterest=false} turns the loops off. */
	public static final String SWITCH = "tokengap.netty.deferInterest";

	private final int threads;

	/** tokengap's loops, or null when Reactor Netty's are handed out. */
	private final EventLoopGroup loops;

	private final EventLoopGroup colocated;

	private ProxyEventLoops(int threads, boolean deferred) {
		this.threads = threads;
		// a loop's thread starts with its first task: building the group costs no thread
		this.loops = deferred ? new MultiThreadIoEventLoopGroup(threads, threadFactory(),
				DeferredInterestIoHandler.factory(EpollIoHandler.newFactory())) : null;
		this.colocated = deferred ? LoopResources.colocate(this.loops) : null;
	}

	/**
	 * The proxy port's loops: tokengap's own where epoll is available and the switch is
	 * on, else Reactor Netty's.
	 * @return the loop resources to run the proxy port on
	 */
	public static ProxyEventLoops create() {
		boolean on = !"false".equalsIgnoreCase(System.getProperty(SWITCH, "true").trim())
				&& !"false".equalsIgnoreCase(System.getProperty("reactor.netty.native", "true").trim());
		return new ProxyEventLoops(LoopResources.DEFAULT_IO_WORKER_COUNT, on && Epoll.isAvailable());
	}

	/**
	 * Whether these are tokengap's loops, with interest changes deferred.
	 * @return false when Reactor Netty's loops are handed out
	 */
	public boolean deferred() {
		return this.loops != null;
	}

	@Override
	public EventLoopGroup onServer(boolean useNative) {
		return (useNative && deferred()) ? this.loops : HttpResources.get().onServer(useNative);
	}

	@Override
	public EventLoopGroup onClient(boolean useNative) {
		return (useNative && deferred()) ? this.colocated : HttpResources.get().onClient(useNative);
	}

	@Override
	public boolean daemon() {
		return true;
	}

	@Override
	public Mono<Void> disposeLater(Duration quietPeriod, Duration timeout) {
		if (this.loops == null) {
			return Mono.empty();
		}
		return Mono.create((sink) -> this.loops
			.shutdownGracefully(quietPeriod.toMillis(), timeout.toMillis(), TimeUnit.MILLISECONDS)
			.addListener((future) -> sink.success()));
	}

	private static ThreadFactory threadFactory() {
		AtomicInteger count = new AtomicInteger();
		return (runnable) -> {
			Thread thread = new FastThreadLocalThread(runnable, "tokengap-epoll-" + count.incrementAndGet());
			thread.setDaemon(true);
			return thread;
		};
	}

	@Override
	public String toString() {
		return deferred() ? "ProxyEventLoops[threads=" + this.threads + ", interest changes deferred to the next wait]"
				: "ProxyEventLoops[Reactor Netty's]";
	}

}
