package dev.tokengap.proxy;

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
 * Arming moves a deadline, not a timer ({@link LoopDeadline}): a keep-alive connection
 * serving request after request schedules about one check per timeout instead of a task
 * and a cancel per request.
 */
public final class RequestHeaderTimeoutHandler extends ChannelDuplexHandler {

	/** Name in the pipeline. */
	public static final String NAME = "tokengap.requestHeaderTimeout";

	private final long timeoutNanos;

	private ChannelHandlerContext context;

	private LoopDeadline deadline;

	private boolean armed;

	private long deadlineNanos;

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
		if (this.deadline == null) {
			this.context = ctx;
			this.deadline = new LoopDeadline(ctx.executor(), this::check);
		}
		this.armed = true;
		this.deadlineNanos = this.deadline.now() + this.timeoutNanos;
		this.deadline.checkBy(this.deadlineNanos);
	}

	private void disarm() {
		this.armed = false;
	}

	private void check() {
		if (!this.armed) {
			return;
		}
		if (this.deadline.now() - this.deadlineNanos >= 0) {
			this.armed = false;
			this.context.close();
		}
		else {
			this.deadline.checkBy(this.deadlineNanos);
		}
	}

	private void cancel() {
		this.armed = false;
		if (this.deadline != null) {
			this.deadline.cancel();
		}
	}

}
