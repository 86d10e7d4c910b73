package dev.tokengap.proxy;

import java.util.ArrayDeque;
import java.util.concurrent.ScheduledFuture;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.EmptyHttpHeaders;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * One request to the engine, from the wait for a connection to the last byte of the
 * response, on the event loop of its pool. It is also the response body's publisher: the
 * body's buffers go to the one subscriber as they are decoded, and only as far as it has
 * asked; while it has not, reading from the engine pauses (TCP backpressure reaches the
 * engine) and what was already read waits here.
 *
 * <pre>
 * ACQUIRING ─connection─▶ SENT ─headers─▶ STREAMING ─last chunk─▶ ENDED (connection reused)
 *     │                    │                  │
 *     └─ fails, cancel ────┴──────────────────┴──▶ OVER (the connection is closed, so the
 *                                                       engine aborts the request)
 * </pre>
 */
final class EngineExchange implements Publisher<ByteBuf>, Subscription {

	private static final int ACQUIRING = 0;

	private static final int SENT = 1;

	private static final int STREAMING = 2;

	private static final int ENDED = 3;

	private static final int OVER = 4;

	private final UpstreamClient client;

	private final EnginePool pool;

	private final HttpMethod method;

	private final String uri;

	/** The request's headers, until the request is sent: a stream does not keep them. */
	private HttpHeaders headers;

	private final Listener listener;

	/** This exchange's reference to the request body, until the write takes it. */
	private ByteBuf body;

	private int state = ACQUIRING;

	private ScheduledFuture<?> acquireTimer;

	private EngineConnection connection;

	private long ticket;

	private HttpResponse response;

	private boolean informational;

	private Subscriber<? super ByteBuf> subscriber;

	private long demand;

	private final ArrayDeque<HttpContent> pending = new ArrayDeque<>(2);

	private boolean complete;

	private Throwable error;

	private boolean signalled;

	private boolean draining;

	private boolean cancelled;

	/** While the response head is being handed on: the relay may take the body framed. */
	private boolean framingOffered;

	/**
	 * The reader of the body's framing (its connection's) when the chunked body passes
	 * through as the engine framed it; null when it comes decoded. Kept after the
	 * exchange lets go of the connection: it still holds the ranges of the last buffer
	 * delivered.
	 */
	private ChunkedFraming framing;

	/** An unfinished chunk-size line from the end of the last read, read again whole. */
	private ByteBuf carry;

	/** The queued piece being delivered, whose data ranges the subscriber reads. */
	private FramedPiece delivering;

	EngineExchange(UpstreamClient client, EnginePool pool, HttpMethod method, String uri, HttpHeaders headers,
			ByteBuf body, Listener listener) {
		this.client = client;
		this.pool = pool;
		this.method = method;
		this.uri = uri;
		this.headers = headers;
		this.body = body.retainedDuplicate();
		this.listener = listener;
	}

	/** The response headers; set once the listener was told of them. */
	HttpResponse response() {
		return this.response;
	}

	/** Asks the pool for a connection. On the loop. */
	void start() {
		if (this.state == ACQUIRING && !this.cancelled) {
			this.pool.acquire(this);
		}
	}

	void awaitConnection(ScheduledFuture<?> timer) {
		this.acquireTimer = timer;
	}

	/**
	 * Sends the request on a connection the pool found for it. On the loop.
	 * @param connection an idle or new connection
	 */
	void send(EngineConnection connection) {
		cancelAcquireTimer();
		if (this.state != ACQUIRING) {
			// cancelled while it waited: the connection was never used
			this.pool.release(connection);
			return;
		}
		this.state = SENT;
		this.connection = connection;
		connection.serve(this);
		this.ticket = connection.timeouts().awaitHeaders(this.client.responseTimeoutNanos());
		ByteBuf content = this.body;
		this.body = null;
		HttpHeaders sent = this.headers;
		this.headers = null;
		Channel channel = connection.channel();
		channel.writeAndFlush(new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, this.method, this.uri, content, sent,
				EmptyHttpHeaders.INSTANCE), channel.voidPromise());
	}

	/**
	 * No connection: connecting failed, the pool stayed busy, or it is closing. On the
	 * loop.
	 * @param cause why
	 */
	void acquireFailed(Throwable cause) {
		cancelAcquireTimer();
		if (this.state != ACQUIRING) {
			return;
		}
		this.state = OVER;
		releaseBody();
		this.listener.failedBeforeResponse(this.client.beforeResponse(cause));
	}

	/**
	 * What the connection's codec decoded. On the loop.
	 * @param msg a response head or a piece of its body
	 */
	void read(Object msg) {
		if (msg instanceof HttpResponse head) {
			if (head.decoderResult().isFailure()) {
				ReferenceCountUtil.release(msg);
				failed(new DecoderException("the engine's response is not valid HTTP/1.1",
						head.decoderResult().cause()));
				return;
			}
			responded(head);
		}
		if (msg instanceof HttpContent content) {
			content(content);
		}
		else if (msg instanceof ByteBuf bytes && this.framing != null) {
			framedBytes(bytes);
		}
		else {
			ReferenceCountUtil.release(msg);
		}
	}

	private void responded(HttpResponse head) {
		if (this.state != SENT) {
			return;
		}
		if (head.status().codeClass() == HttpStatusClass.INFORMATIONAL) {
			// 100 Continue and the like: the final response follows
			this.informational = true;
			return;
		}
		this.response = head;
		this.state = STREAMING;
		this.connection.timeouts().headersIn(this.ticket, this.client.idleTimeoutNanos());
		this.framingOffered = HttpUtil.isTransferEncodingChunked(head) && !HttpMethod.HEAD.equals(this.method);
		try {
			this.listener.responded(this);
		}
		finally {
			this.framingOffered = false;
		}
	}

	/**
	 * Asks for the body as the engine framed it: chunk-size lines and all, up to (not
	 * including) the last chunk, whose place the client's own last chunk takes. Granted
	 * only while the response head is being handed on (the subscriber is made in the same
	 * call) and only for a chunked body. On the loop.
	 * @return whether the body comes framed; if so, {@link #dataRanges()} tells, during
	 * each {@code onNext}, which of the buffer's bytes are chunk data
	 */
	boolean passFraming() {
		if (!this.framingOffered || this.state != STREAMING) {
			return false;
		}
		this.framing = this.connection.framing();
		return true;
	}

	/** Whether the body passes through framed. On the loop. */
	boolean passesFraming() {
		return this.framing != null;
	}

	/**
	 * Data ranges of the buffer being delivered to {@code onNext}, when the body passes
	 * through framed.
	 * @return how many
	 */
	int dataRanges() {
		return (this.delivering != null) ? this.delivering.ranges.length / 2 : this.framing.rangeCount();
	}

	/**
	 * @param i a data range below {@link #dataRanges()}
	 * @return the index of its first byte in the buffer being delivered
	 */
	int dataStart(int i) {
		return (this.delivering != null) ? this.delivering.ranges[2 * i] : this.framing.rangeStart(i);
	}

	/**
	 * @param i a data range below {@link #dataRanges()}
	 * @return the index after its last byte in the buffer being delivered
	 */
	int dataEnd(int i) {
		return (this.delivering != null) ? this.delivering.ranges[2 * i + 1] : this.framing.rangeEnd(i);
	}

	/**
	 * Bytes of a body that passes through framed, as read. The part the client gets goes
	 * to the subscriber with its data ranges; the last chunk ends the body.
	 */
	private void framedBytes(ByteBuf read) {
		if (this.state != STREAMING || this.cancelled) {
			read.release();
			return;
		}
		ByteBuf buf = (this.carry != null) ? joinCarry(read) : read;
		ChunkedFraming framing = this.framing;
		int end = buf.writerIndex();
		framing.read(buf);
		if (framing.carryFrom() >= 0) {
			this.carry = buf.alloc().buffer(end - framing.carryFrom());
			this.carry.writeBytes(buf, framing.carryFrom(), end - framing.carryFrom());
		}
		buf.writerIndex(framing.forwardEnd());
		String problem = framing.problem();
		boolean last = framing.complete();
		if (last) {
			this.state = ENDED;
			this.complete = true;
			endOnConnection(reusable() && framing.consumedEnd() == end);
		}
		offerFramed(buf);
		if (problem != null) {
			failed(new DecoderException(
					"the engine's response body is not valid HTTP/1.1 chunked framing: " + problem));
		}
		else if (last) {
			drain();
		}
	}

	private ByteBuf joinCarry(ByteBuf read) {
		ByteBuf joined = read.alloc().buffer(this.carry.readableBytes() + read.readableBytes());
		joined.writeBytes(this.carry).writeBytes(read);
		this.carry.release();
		this.carry = null;
		read.release();
		return joined;
	}

	/**
	 * Hands a framed buffer on now, with the reader's ranges, or queues it with a copy of
	 * them (the reader moves on with the next read).
	 */
	private void offerFramed(ByteBuf buf) {
		if (!buf.isReadable()) {
			buf.release();
			return;
		}
		if (deliversNow()) {
			try {
				emit(buf);
			}
			finally {
				buf.release();
			}
			return;
		}
		int[] ranges = new int[2 * this.framing.rangeCount()];
		for (int i = 0; i < this.framing.rangeCount(); i++) {
			ranges[2 * i] = this.framing.rangeStart(i);
			ranges[2 * i + 1] = this.framing.rangeEnd(i);
		}
		enqueue(new FramedPiece(buf, ranges));
	}

	private boolean deliversNow() {
		return this.pending.isEmpty() && this.demand > 0 && !this.draining;
	}

	/** Waits for demand: reading from the engine pauses while nothing is asked for. */
	private void enqueue(HttpContent content) {
		this.pending.addLast(content);
		if (this.state == STREAMING && this.demand == 0) {
			this.connection.channel().config().setAutoRead(false);
		}
		drain();
	}

	private void content(HttpContent content) {
		if (content.decoderResult().isFailure()) {
			content.release();
			failed(new DecoderException("the engine's response body is not valid HTTP/1.1",
					content.decoderResult().cause()));
			return;
		}
		boolean last = content instanceof LastHttpContent;
		if (this.informational) {
			this.informational = !last;
			content.release();
			return;
		}
		if (this.state != STREAMING || this.cancelled) {
			content.release();
			return;
		}
		if (last) {
			this.state = ENDED;
			this.complete = true;
			endOnConnection(reusable());
		}
		if (deliversNow()) {
			deliver(content);
			if (last) {
				drain();
			}
			return;
		}
		enqueue(content);
	}

	private boolean reusable() {
		if (!HttpUtil.isKeepAlive(this.response)) {
			return false;
		}
		// a response that came before its request was written whole (an early 4xx)
		// leaves the connection's framing unknown
		ChannelOutboundBuffer outbound = this.connection.channel().unsafe().outboundBuffer();
		return outbound != null && outbound.isEmpty();
	}

	/**
	 * The connection failed or closed under the exchange. On the loop.
	 * @param cause why
	 */
	void failed(Throwable cause) {
		switch (this.state) {
			case SENT -> {
				this.state = OVER;
				endOnConnection(false);
				this.listener.failedBeforeResponse(this.client.beforeResponse(cause));
			}
			case STREAMING -> {
				this.state = OVER;
				endOnConnection(false);
				this.error = cause;
				drain();
			}
			default -> {
				// ended or over: nothing of this exchange is left on the connection
			}
		}
	}

	/**
	 * The proxy exchange was cancelled before the response headers came (the client went
	 * away). On the loop.
	 */
	void cancelBeforeResponse() {
		if (this.state == ACQUIRING) {
			this.state = OVER;
			cancelAcquireTimer();
			this.pool.forget(this);
			releaseBody();
		}
		else if (this.state == SENT) {
			this.state = OVER;
			endOnConnection(false);
		}
	}

	/**
	 * The exchange is over for the proxy: whatever of the response is still unread is
	 * dropped with its connection. On the loop.
	 */
	void abandon() {
		if (this.state == STREAMING) {
			this.state = OVER;
			endOnConnection(false);
		}
		cancelBeforeResponse();
		this.cancelled = true;
		releasePending();
	}

	private void endOnConnection(boolean reuse) {
		EngineConnection on = this.connection;
		if (on == null) {
			return;
		}
		this.connection = null;
		releaseCarry();
		on.timeouts().done(this.ticket);
		on.release(this);
		if (reuse) {
			on.codecIn();
			on.channel().config().setAutoRead(true);
			this.pool.release(on);
		}
		else {
			on.channel().close();
		}
	}

	@Override
	public void subscribe(Subscriber<? super ByteBuf> subscriber) {
		if (this.subscriber != null) {
			subscriber.onSubscribe(this);
			subscriber.onError(new IllegalStateException("an engine response body has one subscriber"));
			return;
		}
		this.subscriber = subscriber;
		subscriber.onSubscribe(this);
		drain();
	}

	@Override
	public void request(long n) {
		if (n <= 0) {
			return;
		}
		if (!this.pool.loop().inEventLoop()) {
			this.pool.loop().execute(() -> request(n));
			return;
		}
		long total = this.demand + n;
		this.demand = (total < 0) ? Long.MAX_VALUE : total;
		drain();
	}

	@Override
	public void cancel() {
		if (!this.pool.loop().inEventLoop()) {
			this.pool.loop().execute(this::cancel);
			return;
		}
		this.cancelled = true;
		if (this.state == STREAMING) {
			this.state = OVER;
			endOnConnection(false);
		}
		releasePending();
	}

	private void drain() {
		if (this.draining || this.subscriber == null) {
			return;
		}
		this.draining = true;
		try {
			while (!this.cancelled) {
				if (this.demand > 0 && !this.pending.isEmpty()) {
					deliver(this.pending.pollFirst());
					continue;
				}
				if (this.pending.isEmpty() && (this.complete || this.error != null) && !this.signalled) {
					this.signalled = true;
					if (this.error != null) {
						this.subscriber.onError(this.error);
					}
					else {
						this.subscriber.onComplete();
					}
				}
				break;
			}
			if (this.cancelled) {
				releasePending();
			}
			else if (this.state == STREAMING && this.pending.isEmpty() && this.demand > 0
					&& !this.connection.channel().config().isAutoRead()) {
				this.connection.channel().config().setAutoRead(true);
			}
		}
		finally {
			this.draining = false;
		}
	}

	private void deliver(HttpContent content) {
		try {
			this.delivering = (content instanceof FramedPiece piece) ? piece : null;
			emit(content.content());
		}
		finally {
			this.delivering = null;
			content.release();
		}
	}

	private void emit(ByteBuf buf) {
		if (buf.isReadable() && this.subscriber != null && !this.cancelled) {
			this.demand--;
			this.subscriber.onNext(buf);
		}
	}

	private void releasePending() {
		HttpContent content;
		while ((content = this.pending.pollFirst()) != null) {
			content.release();
		}
	}

	private void releaseCarry() {
		if (this.carry != null) {
			this.carry.release();
			this.carry = null;
		}
	}

	private void releaseBody() {
		if (this.body != null) {
			this.body.release();
			this.body = null;
		}
	}

	/**
	 * A framed piece that waits for demand, with its data ranges: the connection's
	 * framing reader has moved on by the time it is delivered.
	 */
	private static final class FramedPiece extends DefaultHttpContent {

		private final int[] ranges;

		FramedPiece(ByteBuf content, int[] ranges) {
			super(content);
			this.ranges = ranges;
		}

	}

	private void cancelAcquireTimer() {
		if (this.acquireTimer != null) {
			this.acquireTimer.cancel(false);
			this.acquireTimer = null;
		}
	}

	/**
	 * Told, on the loop and once, how the request ended before its response body: with
	 * the response head, or with a failure.
	 */
	interface Listener {

		/**
		 * The engine's response head came; the exchange publishes its body.
		 * @param exchange this exchange, whose {@link #response()} is the head
		 */
		void responded(EngineExchange exchange);

		/**
		 * No response: the exchange is over.
		 * @param cause an {@link UpstreamUnavailableException},
		 * {@link UpstreamSaturatedException} or {@link UpstreamTimeoutException}
		 */
		void failedBeforeResponse(Throwable cause);

	}

}
