package dev.tokengap.proxy;

import java.util.concurrent.TimeUnit;

import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.handler.timeout.ReadTimeoutException;

/**
 * Fails an upstream response that stays silent longer than the idle timeout, but not while
 * tokengap itself has paused reading because the client is slow: that silence is backpressure,
 * not an idle engine.
 */
final class UpstreamIdleTimeoutHandler extends IdleStateHandler {

	static final String NAME = "tokengap.upstreamIdle";

	private boolean fired;

	UpstreamIdleTimeoutHandler(long idleMillis) {
		super(idleMillis, 0, 0, TimeUnit.MILLISECONDS);
	}

	@Override
	protected void channelIdle(ChannelHandlerContext ctx, IdleStateEvent event) {
		if (!this.fired && ctx.channel().config().isAutoRead()) {
			this.fired = true;
			ctx.fireExceptionCaught(ReadTimeoutException.INSTANCE);
			ctx.close();
		}
	}

}
