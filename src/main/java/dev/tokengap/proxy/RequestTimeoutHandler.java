package dev.tokengap.proxy;

import java.time.Duration;

import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.LastHttpContent;

/**
 * Bounds how long a client connection may take to send its request
 * ({@code tokengap.proxy.request-timeout}, slow-loris protection): a request's headers
 * within the timeout of the connection's open or of the previous response's end, then its
 * body within the timeout of its headers. While a request is whole and not yet answered
 * nothing is timed here: that wait is the engine's, not the client's. An idle timeout
 * cannot do this, since a client trickling bytes is never idle.
 * <p>
 * Headers that do not come in time close the connection. A body that stops short is
 * answered: the handler fails the body's read with a {@link RequestBodyTimeoutException}
 * (the exchange answers 408, the client's fault, not tokengap's), and the connection
 * closes once that answer is written, or one timeout later if none comes.
 * <p>
 * Arming moves a deadline, not a timer ({@link LoopDeadline}): a keep-alive connection
 * serving request after request schedules about one check per timeout instead of a task
 * and a cancel per request, where Reactor Netty's request timeout scheduled and cancelled
 * one for every request.
 */
public final class RequestTimeoutHandler extends ChannelDuplexHandler {

	/** Name in the pipeline. */
	public static final String NAME = "tokengap.requestTimeout";

	private final Duration timeout;

	private final long timeoutNanos;

	private ChannelHandlerContext context;

	private LoopDeadline deadline;

	private boolean armed;

	private long deadlineNanos;

	/** A request's headers have come and its body has not ended. */
	private boolean inBody;

	/** A response ended while {@link #inBody}: answered before its body was whole. */
	private boolean answeredEarly;

	/** Requests read whole and not yet answered (more than one if pipelined). */
	private int unanswered;

	/** A body's wait ran out: the connection closes after its answer. */
	private boolean expired;

	/**
	 * Creates the handler.
	 * @param timeout longest wait for a request's headers, and then for its body
	 */
	public RequestTimeoutHandler(Duration timeout) {
		this.timeout = timeout;
		this.timeoutNanos = timeout.toNanos();
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
			// the body's own wait starts with the headers
			this.inBody = true;
			this.answeredEarly = false;
			arm(ctx);
		}
		if (msg instanceof LastHttpContent) {
			// whole (a request without a body decodes as its headers and an empty end)
			this.inBody = false;
			if (this.answeredEarly) {
				// answered already (a 413 on its declared length, say): the wait for the
				// next request starts now
				this.answeredEarly = false;
				arm(ctx);
			}
			else {
				this.unanswered++;
				this.armed = false;
			}
		}
		super.channelRead(ctx, msg);
	}

	@Override
	public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
		if (msg instanceof LastHttpContent && !isInterim(msg)) {
			if (this.expired) {
				ChannelPromise written = promise.unvoid();
				written.addListener(ChannelFutureListener.CLOSE);
				super.write(ctx, msg, written);
				return;
			}
			if (this.inBody) {
				this.answeredEarly = true;
			}
			else if (this.unanswered > 0 && --this.unanswered == 0) {
				// the wait for the next request starts
				arm(ctx);
			}
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

	/**
	 * {@code 100 Continue} and its kind: a whole message, but not the request's answer.
	 */
	private static boolean isInterim(Object msg) {
		return msg instanceof HttpResponse response && response.status().codeClass() == HttpStatusClass.INFORMATIONAL;
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

	private void check() {
		if (!this.armed) {
			return;
		}
		if (this.deadline.now() - this.deadlineNanos < 0) {
			this.deadline.checkBy(this.deadlineNanos);
			return;
		}
		if (this.inBody && !this.expired && !this.answeredEarly && this.unanswered == 0) {
			// The exchange reading this body is the connection's current one: its read
			// fails, it answers 408 and that answer's end closes the connection; one
			// timeout later the connection closes anyway. (Behind a pipelined request
			// still being answered, the connection just closes.)
			this.expired = true;
			arm(this.context);
			this.context.fireExceptionCaught(new RequestBodyTimeoutException(this.timeout));
			return;
		}
		this.armed = false;
		this.context.close();
	}

	private void cancel() {
		this.armed = false;
		if (this.deadline != null) {
			this.deadline.cancel();
		}
	}

}
