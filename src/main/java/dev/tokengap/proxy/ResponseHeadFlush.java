package dev.tokengap.proxy;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpResponse;

/**
 * Lets a response head and the body that follows it leave in one write. Reactor Netty
 * flushes a response's head on its own; when the engine's head and the first piece of its
 * body arrive in one read (a whole non-streaming answer, a stream's first event), that is
 * two socket writes where nginx makes one, and under request churn each write is a
 * syscall per request. So a flush that would send a bare head waits until the end of the
 * event loop's current turn: a body written before then goes out with the head in the
 * same flush; otherwise the head goes out alone, microseconds later, as the engine sent
 * it. Flushes of anything else pass at once.
 *
 * <pre>
 * write(head) ─ flush ─▶ held (a task is queued on the loop)
 *        write(body) ─ flush ─▶ head + body in one write; the task finds nothing held
 *        (no body this turn)   ─▶ the task flushes the head alone
 * </pre>
 */
public final class ResponseHeadFlush extends ChannelOutboundHandlerAdapter implements Runnable {

	/** Name in the pipeline. */
	public static final String NAME = "tokengap.responseHeadFlush";

	private ChannelHandlerContext ctx;

	/** The last message written is a bare response head. */
	private boolean headLast;

	/** A flush was held back and no flush has passed since. */
	private boolean flushHeld;

	private boolean taskQueued;

	@Override
	public void handlerAdded(ChannelHandlerContext ctx) {
		this.ctx = ctx;
	}

	@Override
	public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
		this.headLast = msg instanceof HttpResponse && !(msg instanceof HttpContent);
		ctx.write(msg, promise);
	}

	@Override
	public void flush(ChannelHandlerContext ctx) {
		if (!this.headLast) {
			this.flushHeld = false;
			ctx.flush();
			return;
		}
		this.flushHeld = true;
		if (!this.taskQueued) {
			this.taskQueued = true;
			// run as this object: no task allocated per request
			ctx.executor().execute(this);
		}
	}

	/**
	 * The end of the loop's turn: a flush still held goes out now (the head alone, or
	 * with whatever was written after it and not yet flushed).
	 */
	@Override
	public void run() {
		this.taskQueued = false;
		if (this.flushHeld) {
			this.flushHeld = false;
			this.ctx.flush();
		}
	}

}
