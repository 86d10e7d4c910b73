package dev.tokengap.proxy;

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
 * life), and armed per request from the connection's event loop, with no pipeline change
 * and no timer thread. Arming moves a deadline, not a timer ({@link LoopDeadline}): a
 * connection that serves request after request schedules about one check per timeout, not
 * two tasks and two cancels per request. Each arming returns a ticket; only the holder of
 * the current ticket changes the deadlines, so an exchange that ends after its pooled
 * connection went on to the next request cannot disarm that request's deadlines.
 */
final class UpstreamTimeouts extends ChannelInboundHandlerAdapter {

	static final String NAME = "tokengap.upstreamTimeouts";

	private static final int NONE = 0;

	private static final int HEADERS = 1;

	private static final int IDLE = 2;

	private ChannelHandlerContext context;

	private LoopDeadline deadline;

	private long ticket;

	/**
	 * What the current request waits for: {@link #NONE}, {@link #HEADERS}, {@link #IDLE}.
	 */
	private int waiting = NONE;

	private long headersDeadlineNanos;

	/** The idle timeout, while {@link #IDLE}. */
	private long idleNanos;

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
		this.deadline = new LoopDeadline(ctx.executor(), this::check);
	}

	@Override
	public void channelRead(ChannelHandlerContext ctx, Object msg) {
		if (this.waiting == IDLE) {
			this.lastReadNanos = this.deadline.now();
		}
		ctx.fireChannelRead(msg);
	}

	@Override
	public void channelInactive(ChannelHandlerContext ctx) {
		this.waiting = NONE;
		this.deadline.cancel();
		ctx.fireChannelInactive();
	}

	/**
	 * A request is being sent: its response headers are due within {@code timeoutNanos}.
	 * Called on the connection's event loop.
	 * @param timeoutNanos the response timeout
	 * @return the request's ticket
	 */
	long awaitHeaders(long timeoutNanos) {
		long current = ++this.ticket;
		this.waiting = HEADERS;
		this.headersDeadlineNanos = this.deadline.now() + timeoutNanos;
		this.deadline.checkBy(this.headersDeadlineNanos);
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
		this.waiting = IDLE;
		this.idleNanos = idleNanos;
		this.lastReadNanos = this.deadline.now();
		this.deadline.checkBy(this.lastReadNanos + idleNanos);
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
			// a pending check finds nothing to wait for and ends
			this.waiting = NONE;
		}
	}

	private void check() {
		if (!this.context.channel().isActive()) {
			return;
		}
		long now = this.deadline.now();
		if (this.waiting == HEADERS) {
			if (now - this.headersDeadlineNanos >= 0) {
				this.waiting = NONE;
				fail(new HeadersTimeoutException());
			}
			else {
				this.deadline.checkBy(this.headersDeadlineNanos);
			}
		}
		else if (this.waiting == IDLE) {
			if (!this.context.channel().config().isAutoRead()) {
				// tokengap stopped reading for a slow client: the silence is not the
				// engine's
				this.lastReadNanos = now;
				this.deadline.checkBy(now + this.idleNanos);
			}
			else if (now - this.lastReadNanos >= this.idleNanos) {
				this.waiting = NONE;
				fail(ReadTimeoutException.INSTANCE);
			}
			else {
				this.deadline.checkBy(this.lastReadNanos + this.idleNanos);
			}
		}
	}

	private void fail(Throwable cause) {
		this.context.fireExceptionCaught(cause);
		this.context.close();
	}

	/** No response headers within the response timeout (rare: one is made each time). */
	static final class HeadersTimeoutException extends TimeoutException {

		HeadersTimeoutException() {
			super("no response headers within the response timeout");
		}

	}

}
