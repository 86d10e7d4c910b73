package dev.tokengap.proxy;

import java.util.Objects;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufHolder;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Exceptions;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

/**
 * A client's request body, read whole and bounded, as one buffer: one operator in place
 * of a chain of six, and no composite buffer unless the body came in more than one read.
 * <p>
 * A body that arrives in one piece (the common case: a few hundred bytes of JSON) is that
 * piece, retained; a second piece turns it into a composite of both. The buffer emitted
 * belongs to the subscriber; until it is emitted, whatever ends the read early (the
 * limit, an error, a cancel) releases what was gathered, exactly once. Held to the
 * Reactive Streams TCK as a publisher and, its reader, as a subscriber.
 */
final class RequestBody extends Mono<ByteBuf> {

	private final Publisher<?> source;

	private final Channel channel;

	private final long limit;

	/**
	 * @param source the body's pieces, buffers or holders of one (Reactor Netty's
	 * {@code receiveObject()}: each {@code HttpContent} as decoded, without the operator
	 * {@code receive()} adds to take its buffer out), each released by the source after
	 * it is passed on
	 * @param channel the client connection (its allocator, and whether its body failed to
	 * decode)
	 * @param limit the most bytes the body may have
	 */
	RequestBody(Publisher<?> source, Channel channel, long limit) {
		this.source = source;
		this.channel = channel;
		this.limit = limit;
	}

	@Override
	public void subscribe(CoreSubscriber<? super ByteBuf> actual) {
		this.source.subscribe(new Reader(actual, this.channel, this.limit));
	}

	/** Gathers the pieces; emits the body once, on the source's completion. */
	static final class Reader implements CoreSubscriber<Object>, Subscription {

		private static final AtomicIntegerFieldUpdater<Reader> STATE = AtomicIntegerFieldUpdater
			.newUpdater(Reader.class, "state");

		private static final int READING = 0;

		/** The source completed before the body was asked for: it waits for demand. */
		private static final int WHOLE = 1;

		private static final int OVER = 2;

		private final CoreSubscriber<? super ByteBuf> actual;

		private final Channel channel;

		private final long limit;

		private Subscription upstream;

		private ByteBuf body;

		private volatile boolean requested;

		/** {@link #OVER} once the body was emitted or released. */
		private volatile int state;

		Reader(CoreSubscriber<? super ByteBuf> actual, Channel channel, long limit) {
			this.actual = actual;
			this.channel = channel;
			this.limit = limit;
		}

		@Override
		public Context currentContext() {
			return this.actual.currentContext();
		}

		@Override
		public void onSubscribe(Subscription s) {
			if (Operators.validate(this.upstream, s)) {
				this.upstream = s;
				this.actual.onSubscribe(this);
			}
		}

		@Override
		public void onNext(Object piece) {
			Objects.requireNonNull(piece, "piece");
			if (this.state != READING) {
				// the source releases its own pieces: nothing of this one is held
				return;
			}
			ByteBuf buf = (piece instanceof ByteBuf b) ? b : (piece instanceof ByteBufHolder h) ? h.content() : null;
			if (buf == null) {
				this.upstream.cancel();
				fail(new IllegalStateException(
						"a request body piece that is not bytes: " + piece.getClass().getName()));
				return;
			}
			ByteBuf gathered = this.body;
			int size = (gathered != null) ? gathered.readableBytes() : 0;
			if ((long) size + buf.readableBytes() > this.limit) {
				this.upstream.cancel();
				fail(new RequestBodyTooLargeException(this.limit));
				return;
			}
			if (gathered == null) {
				this.body = buf.retain();
			}
			else if (gathered instanceof CompositeByteBuf composite) {
				composite.addComponent(true, buf.retain());
			}
			else {
				CompositeByteBuf composite = alloc().compositeBuffer(1024);
				composite.addComponent(true, gathered);
				composite.addComponent(true, buf.retain());
				this.body = composite;
			}
		}

		@Override
		public void onError(Throwable error) {
			Objects.requireNonNull(error, "error");
			if (this.state != READING) {
				// Over already: Reactor Netty's receive signals an inbound error a second
				// time when the connection terminates after it (a body timed out, then
				// answered and closed). Nothing is held and the exchange has its answer.
				return;
			}
			fail(error);
		}

		@Override
		public void onComplete() {
			if (this.state != READING) {
				return;
			}
			if (StrictRequestHandler.bodyFailed(this.channel)) {
				// Reactor Netty 1.3.6 completes the body of a request whose chunked
				// framing breaks (sendDecodingFailures calls onComplete, not an error):
				// never forward the truncation.
				fail(new RequestBodyDecodingException());
				return;
			}
			// A body without pieces may complete before it was asked for: it is emitted
			// on the request (rule 1.1), by whichever of the two comes second.
			if (STATE.compareAndSet(this, READING, WHOLE) && this.requested) {
				emit();
			}
		}

		@Override
		public void request(long n) {
			if (n <= 0) {
				// rule 3.9
				this.upstream.cancel();
				fail(Exceptions.nullOrNegativeRequestException(n));
				return;
			}
			if (this.requested) {
				return;
			}
			this.requested = true;
			if (this.state == WHOLE) {
				emit();
				return;
			}
			// every piece is needed before anything can be emitted
			this.upstream.request(Long.MAX_VALUE);
		}

		private void emit() {
			if (!STATE.compareAndSet(this, WHOLE, OVER)) {
				return;
			}
			ByteBuf gathered = this.body;
			this.body = null;
			this.actual.onNext((gathered != null) ? gathered : Unpooled.EMPTY_BUFFER);
			this.actual.onComplete();
		}

		@Override
		public void cancel() {
			this.upstream.cancel();
			release();
		}

		private void fail(Throwable error) {
			if (release()) {
				this.actual.onError(error);
			}
			else {
				Operators.onErrorDropped(error, currentContext());
			}
		}

		private boolean release() {
			int was;
			do {
				was = this.state;
				if (was == OVER) {
					return false;
				}
			}
			while (!STATE.compareAndSet(this, was, OVER));
			ByteBuf gathered = this.body;
			this.body = null;
			if (gathered != null) {
				gathered.release();
			}
			return true;
		}

		private ByteBufAllocator alloc() {
			return this.channel.alloc();
		}

	}

}
