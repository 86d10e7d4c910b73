package dev.tokengap.proxy;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.timeout.ReadTimeoutException;

/**
 * The two deadlines of a request on one engine connection, kept by one handler that lives
 * as long as the connection: the response headers must come within the response timeout
 * of the request's send, and a started response may not stay silent longer than the idle
 * timeout, except while tokengap itself has paused reading because the client is slow
 * (that silence is backpressure, not an idle engine).
 * <p>
 * Installed once when the connection is made, first in its pipeline (every read counts as
 * life), and armed per request from the connection's event loop: a request costs two
 * scheduled tasks on that loop, no pipeline change and no timer thread. Each arming
 * returns a ticket; only the holder of the current ticket changes the deadlines, so an
 * exchange that ends after its pooled connection went on to the next request cannot
 * disarm that request's deadlines.
 */
final class UpstreamTimeouts extends ChannelInboundHandlerAdapter {

	static final String NAME = "tokengap.upstreamTimeouts";

	private ChannelHandlerContext context;

	private long ticket;

	private ScheduledFuture<?> timer;

	private long idleNanos = -1;

	private long lastReadNanos;

	/**
	 * Installs the handler on a new engine connection.
	 * @param channel the connection, before it is used
	 * @return the handler
	 */
	static UpstreamTimeouts install(Channel channel) {
		UpstreamTimeouts timeouts = new UpstreamTimeouts();
		channel.pipeline().addFirst(NAME, timeouts);
		return timeouts;
	}

	@Override
	public void handlerAdded(ChannelHandlerContext ctx) {
		this.context = ctx;
	}

	@Override
	public void channelRead(ChannelHandlerContext ctx, Object msg) {
		if (this.idleNanos > 0) {
			this.lastReadNanos = System.nanoTime();
		}
		ctx.fireChannelRead(msg);
	}

	@Override
	public void channelInactive(ChannelHandlerContext ctx) {
		cancelTimer();
		ctx.fireChannelInactive();
	}

	/**
	 * A request is being sent: its response headers are due within {@code timeoutNanos}.
	 * Called on the connection's event loop.
	 * @param timeoutNanos the response timeout
	 * @return the request's ticket
	 */
	long awaitHeaders(long timeoutNanos) {
		cancelTimer();
		this.idleNanos = -1;
		long current = ++this.ticket;
		this.timer = this.context.executor().schedule(() -> headersLate(current), timeoutNanos, TimeUnit.NANOSECONDS);
		return current;
	}

	/**
	 * The response headers came: from now on the response may be silent at most
	 * {@code idleNanos} at a time. Called on the connection's event loop.
	 * @param ticket the request's ticket
	 * @param idleNanos the idle timeout
	 */
	void headersIn(long ticket, long idleNanos) {
		if (ticket != this.ticket) {
			return;
		}
		cancelTimer();
		this.idleNanos = idleNanos;
		this.lastReadNanos = System.nanoTime();
		scheduleIdleCheck(ticket, idleNanos);
	}

	/**
	 * The request's exchange is over: no deadline of it applies any more. Safe from any
	 * thread.
	 * @param ticket the request's ticket
	 */
	void done(long ticket) {
		if (this.context.executor().inEventLoop()) {
			disarm(ticket);
		}
		else {
			this.context.executor().execute(() -> disarm(ticket));
		}
	}

	private void disarm(long ticket) {
		if (ticket == this.ticket) {
			cancelTimer();
			this.idleNanos = -1;
		}
	}

	private void headersLate(long ticket) {
		if (ticket == this.ticket && this.context.channel().isActive()) {
			this.timer = null;
			fail(new HeadersTimeoutException());
		}
	}

	private void idleCheck(long ticket) {
		if (ticket != this.ticket || this.idleNanos <= 0) {
			return;
		}
		long silent = System.nanoTime() - this.lastReadNanos;
		if (!this.context.channel().config().isAutoRead()) {
			// tokengap stopped reading for a slow client: the silence is not the engine's
			this.lastReadNanos = System.nanoTime();
			scheduleIdleCheck(ticket, this.idleNanos);
		}
		else if (silent >= this.idleNanos) {
			this.timer = null;
			this.idleNanos = -1;
			fail(ReadTimeoutException.INSTANCE);
		}
		else {
			scheduleIdleCheck(ticket, this.idleNanos - silent);
		}
	}

	private void scheduleIdleCheck(long ticket, long delayNanos) {
		this.timer = this.context.executor().schedule(() -> idleCheck(ticket), delayNanos, TimeUnit.NANOSECONDS);
	}

	private void fail(Throwable cause) {
		this.context.fireExceptionCaught(cause);
		this.context.close();
	}

	private void cancelTimer() {
		if (this.timer != null) {
			this.timer.cancel(false);
			this.timer = null;
		}
	}

	/** No response headers within the response timeout (rare: one is made each time). */
	static final class HeadersTimeoutException extends TimeoutException {

		HeadersTimeoutException() {
			super("no response headers within the response timeout");
		}

	}

}
