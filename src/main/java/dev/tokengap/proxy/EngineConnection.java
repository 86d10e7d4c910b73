package dev.tokengap.proxy;

import java.io.IOException;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.util.ReferenceCountUtil;

/**
 * One keep-alive connection to the engine, last in its pipeline: it hands what the HTTP
 * codec decodes to the exchange the connection serves, one exchange at a time, and tells
 * its pool when the connection closes. While a chunked body passes through to the client
 * as the engine framed it, the codec is out of the pipeline and the body's bytes come
 * here as read.
 */
final class EngineConnection extends ChannelInboundHandlerAdapter {

	static final String NAME = "tokengap.engineConnection";

	private final EnginePool pool;

	private final Channel channel;

	private final UpstreamTimeouts timeouts;

	private EngineExchange current;

	/** The framing of the body being passed through, for one response at a time. */
	private final ChunkedFraming framing = new ChunkedFraming();

	/**
	 * Whether the HTTP codec is out of the pipeline while a body's framing passes
	 * through.
	 */
	private boolean codecOut;

	private long idleSinceNanos;

	EngineConnection(EnginePool pool, Channel channel, UpstreamTimeouts timeouts) {
		this.pool = pool;
		this.channel = channel;
		this.timeouts = timeouts;
	}

	Channel channel() {
		return this.channel;
	}

	UpstreamTimeouts timeouts() {
		return this.timeouts;
	}

	/** The reader of a passed-through body's framing. */
	ChunkedFraming framing() {
		return this.framing;
	}

	/**
	 * Takes the HTTP codec out of the pipeline, right after it decoded a response head
	 * whose chunked body passes through: from here on this handler reads the body's bytes
	 * as they came, starting with those the codec had read past the head, which it hands
	 * on as it leaves.
	 */
	private void codecOut(ChannelHandlerContext ctx) {
		this.codecOut = true;
		this.framing.reset();
		ctx.pipeline().remove(EnginePool.CODEC);
	}

	/**
	 * Puts a fresh HTTP codec back once a passed-through body has ended, before the
	 * connection serves another request.
	 */
	void codecIn() {
		if (this.codecOut) {
			this.codecOut = false;
			this.channel.pipeline().addBefore(NAME, EnginePool.CODEC, new HttpClientCodec());
		}
	}

	void serve(EngineExchange exchange) {
		this.current = exchange;
	}

	/**
	 * The exchange is over on this connection (its response was read, or it failed).
	 * @param exchange the exchange that ends
	 */
	void release(EngineExchange exchange) {
		if (this.current == exchange) {
			this.current = null;
		}
	}

	long idleSinceNanos() {
		return this.idleSinceNanos;
	}

	void idleSince(long nanos) {
		this.idleSinceNanos = nanos;
	}

	@Override
	public void channelRead(ChannelHandlerContext ctx, Object msg) {
		EngineExchange exchange = this.current;
		if (exchange == null) {
			// Bytes nobody asked for (after a response, on an idle connection): the
			// connection's
			// framing can no longer be trusted.
			ReferenceCountUtil.release(msg);
			ctx.close();
			return;
		}
		exchange.read(msg);
		if (msg instanceof HttpResponse && exchange.passesFraming() && !this.codecOut) {
			codecOut(ctx);
		}
	}

	@Override
	public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
		EngineExchange exchange = this.current;
		ctx.close();
		if (exchange != null) {
			exchange.failed(cause);
		}
	}

	@Override
	public void channelInactive(ChannelHandlerContext ctx) {
		EngineExchange exchange = this.current;
		this.current = null;
		this.pool.closed(this);
		if (exchange != null) {
			exchange.failed(new EngineClosedException());
		}
		ctx.fireChannelInactive();
	}

	/** The engine closed the connection before the response was complete. */
	static final class EngineClosedException extends IOException {

		EngineClosedException() {
			super("the engine closed the connection before the response was complete");
		}

	}

}
