package dev.tokengap.proxy;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.LastHttpContent;

/**
 * Closes a client connection whose request headers do not arrive in time: armed when the
 * connection opens and again after each response, disarmed when a request's headers have
 * been decoded. An idle timeout cannot do this, since a client trickling header bytes is
 * never idle.
 * <p>
 * Arming moves a deadline, not a timer: one check is pending at a time, and when it runs
 * while armed but not yet due it schedules itself again for the deadline in force. A
 * keep-alive connection serving request after request therefore schedules about one check
 * per timeout instead of a task and a cancel per request.
 */
public final class RequestHeaderTimeoutHandler extends ChannelDuplexHandler {

	/** Name in the pipeline. */
	public static final String NAME = "tokengap.requestHeaderTimeout";

	private final long timeoutNanos;

	private ScheduledFuture<?> timer;

	private ChannelHandlerContext context;

	private boolean armed;

	private long deadlineNanos;

	private final Runnable check = this::check;

	/**
	 * Creates the handler.
	 * @param timeoutNanos longest wait for a request's headers
	 */
	public RequestHeaderTimeoutHandler(long timeoutNanos) {
		this.timeoutNanos = timeoutNanos;
	}

	@Override
	public void handlerAdded(ChannelHandlerContext ctx) {
		if (ctx.channel().isActive()) {
			arm(ctx);
		}
	}

	@Override
	public void channelActive(ChannelHandlerContext ctx) throws Exception {
		arm(ctx);
		super.channelActive(ctx);
	}

	@Override
	public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
		if (msg instanceof HttpRequest) {
			disarm();
		}
		super.channelRead(ctx, msg);
	}

	@Override
	public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
		if (msg instanceof LastHttpContent) {
			arm(ctx);
		}
		super.write(ctx, msg, promise);
	}

	@Override
	public void handlerRemoved(ChannelHandlerContext ctx) {
		cancel();
	}

	@Override
	public void channelInactive(ChannelHandlerContext ctx) throws Exception {
		cancel();
		super.channelInactive(ctx);
	}

	private void arm(ChannelHandlerContext ctx) {
		this.context = ctx;
		this.armed = true;
		this.deadlineNanos = ctx.executor().ticker().nanoTime() + this.timeoutNanos;
		if (this.timer == null) {
			// a pending check comes no later than this deadline: the timeout is fixed
			this.timer = ctx.executor().schedule(this.check, this.timeoutNanos, TimeUnit.NANOSECONDS);
		}
	}

	private void disarm() {
		this.armed = false;
	}

	private void check() {
		this.timer = null;
		if (!this.armed) {
			return;
		}
		long left = this.deadlineNanos - this.context.executor().ticker().nanoTime();
		if (left <= 0) {
			this.armed = false;
			this.context.close();
		}
		else {
			this.timer = this.context.executor().schedule(this.check, left, TimeUnit.NANOSECONDS);
		}
	}

	private void cancel() {
		this.armed = false;
		if (this.timer != null) {
			this.timer.cancel(false);
			this.timer = null;
		}
	}

}
