package dev.tokengap.proxy;

import io.netty.buffer.ByteBuf;
import io.netty.channel.EventLoop;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.Connection;
import reactor.netty.http.client.HttpClientResponse;

/**
 * One request to the engine as the exchange sees it: started, told of its response head
 * or its failure before it (on the client connection's loop), then its body, and ended
 * early by a cancel. Ending it before the body's end closes the engine connection, so the
 * engine aborts the request and frees its KV cache; after the body's end the connection
 * is back in the pool and is left alone.
 */
final class EngineCall {

	private final Mono<Head> request;

	private final EventLoop loop;

	private final Listener listener;

	private Disposable pending;

	private Head head;

	private boolean over;

	private volatile boolean bodyEnded;

	EngineCall(Mono<Head> request, EventLoop loop, Listener listener) {
		this.request = request;
		this.loop = loop;
		this.listener = listener;
	}

	/** Sends the request. On the loop. */
	void start() {
		if (this.over || this.pending != null) {
			return;
		}
		this.pending = this.request.subscribe((arrived) -> OnLoop.run(this.loop, () -> responded(arrived)),
				(error) -> OnLoop.run(this.loop, () -> failed(error)));
	}

	private void responded(Head arrived) {
		if (this.over) {
			arrived.connection().dispose();
			return;
		}
		this.head = arrived;
		this.listener.responded(this);
	}

	private void failed(Throwable error) {
		if (!this.over) {
			this.over = true;
			this.listener.failedBeforeResponse(error);
		}
	}

	/**
	 * @return the engine's response head, once the listener was told of it
	 */
	HttpClientResponse response() {
		return this.head.response();
	}

	/**
	 * The response body, each buffer released by Reactor Netty once its subscriber's
	 * {@code onNext} returns; subscribed once.
	 * @return the body
	 */
	Flux<ByteBuf> body() {
		return this.head.connection().inbound().receive().doOnComplete(() -> this.bodyEnded = true);
	}

	/**
	 * The client went away before the response head: the request is cancelled. On the
	 * loop.
	 */
	void cancelBeforeResponse() {
		this.over = true;
		if (this.pending != null) {
			this.pending.dispose();
		}
	}

	/**
	 * The exchange is over: an engine response not read to its end is aborted. On the
	 * loop.
	 */
	void abandon() {
		this.over = true;
		Head arrived = this.head;
		if (arrived == null) {
			if (this.pending != null) {
				this.pending.dispose();
			}
			return;
		}
		if (!this.bodyEnded) {
			arrived.connection().dispose();
		}
	}

	/** Told of the response head, or of the failure before it; on the client's loop. */
	interface Listener {

		/**
		 * The engine's response headers arrived.
		 * @param call the call, whose {@link #response()} and {@link #body()} are ready
		 */
		void responded(EngineCall call);

		/**
		 * The request failed before any response headers.
		 * @param cause what to answer the client, as {@link UpstreamClient} maps it
		 */
		void failedBeforeResponse(Throwable cause);

	}

	/**
	 * A response head and the connection its body comes on.
	 *
	 * @param response the engine's response
	 * @param connection its connection
	 */
	record Head(HttpClientResponse response, Connection connection) {
	}

}
