package dev.tokengap.lab;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

/** First in the pipeline: sees each raw socket read, notes when it came and counts it. */
final class ReadStamp extends ChannelInboundHandlerAdapter {

	long nanos;

	long seq;

	@Override
	public void channelRead(ChannelHandlerContext ctx, Object msg) {
		this.nanos = System.nanoTime();
		this.seq++;
		ctx.fireChannelRead(msg);
	}

}
