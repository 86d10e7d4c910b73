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
 */
public final class RequestHeaderTimeoutHandler extends ChannelDuplexHandler {

	/** Name in the pipeline. */
	public static final String NAME = "tokengap.requestHeaderTimeout";

	private final long timeoutNanos;

	private ScheduledFuture<?> timer;

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
	public void channelInactive(ChannelHandlerContext ctx) throws Exception {
		disarm();
		super.channelInactive(ctx);
	}

	private void arm(ChannelHandlerContext ctx) {
		disarm();
		this.timer = ctx.executor().schedule(() -> {
			ctx.close();
		}, this.timeoutNanos, TimeUnit.NANOSECONDS);
	}

	private void disarm() {
		if (this.timer != null) {
			this.timer.cancel(false);
			this.timer = null;
		}
	}

}
