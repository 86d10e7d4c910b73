package dev.tokengap.proxy;

import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;

/**
 * Remembers the last exception a client connection's pipeline caught, so that the relay,
 * which writes with the void promise, can tell a write that failed from one that
 * completed: a failed void-promise write fires {@code exceptionCaught} inside the write
 * call and leaves nothing pending, just like a write the socket took whole. Added once
 * per connection, first in the pipeline; it passes every exception on.
 */
final class ClientWriteFailures extends ChannelInboundHandlerAdapter {

	static final String NAME = "tokengap.clientWriteFailures";

	private Throwable failure;

	/**
	 * The catcher of a client connection's pipeline, added on first use.
	 * @param pipeline the client connection's pipeline (called on its event loop)
	 * @return the catcher
	 */
	static ClientWriteFailures of(ChannelPipeline pipeline) {
		ChannelHandler existing = pipeline.get(NAME);
		if (existing instanceof ClientWriteFailures catcher) {
			catcher.failure = null;
			return catcher;
		}
		ClientWriteFailures catcher = new ClientWriteFailures();
		pipeline.addFirst(NAME, catcher);
		return catcher;
	}

	/**
	 * The exception caught since the last call, if any.
	 * @return the exception, or null
	 */
	Throwable take() {
		Throwable caught = this.failure;
		this.failure = null;
		return caught;
	}

	@Override
	public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
		this.failure = cause;
		ctx.fireExceptionCaught(cause);
	}

	@Override
	public boolean isSharable() {
		return false;
	}

}
