package dev.tokengap.backend;

import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.TimeoutException;

import io.netty.buffer.ByteBuf;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.util.AttributeKey;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.netty.Connection;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.client.HttpClientResponse;
import reactor.netty.http.client.PrematureCloseException;
import reactor.netty.resources.ConnectionProvider;
import reactor.netty.resources.LoopResources;
import reactor.util.context.Context;

import org.springframework.boot.ssl.SslBundle;
import org.springframework.util.unit.DataSize;

import dev.tokengap.client.HttpClients;

/**
 * The scraper's HTTP client: tokengap's Reactor Netty client ({@link HttpClients}) with a
 * small pool of its own ({@value #POOL_NAME}) on one event loop of its own
 * ({@code tokengap-scrape}), which also runs the scraper's timer and each fetch's
 * timeout, and keeps the parse of a large {@code /metrics} body off the proxy's loops.
 *
 * <pre>
 * GET ─► status 200? ─► Content-Length over the cap? ─► each chunk copied into the ScrapeBody
 *   │        │no                 │yes                      (Reactor Netty releases it)
 *   │        └───────────────────┴──► connection closed, ScrapeFailedException
 *   └─ the engine closed a kept-alive connection unanswered ─► asked once more
 * </pre>
 *
 * A fetch ends in the body or in a failure: a status other than 200, a body over the cap,
 * the timeout, the network's exception, or the client's close. A fetch that does not end
 * with the whole body closes its connection, so no connection with a response partly read
 * goes back to the pool; idle connections close after 4 s, before uvicorn's 5 s
 * keep-alive would. Reactor Netty sends a request again by itself only when its
 * connection closed before the request went out; a kept-alive connection the engine
 * closed after the request went out, but before answering, is retried here, once, on a
 * new connection.
 */
final class MetricsClient implements AutoCloseable {

	/** The pool's name, the {@code name} label of its metrics. */
	static final String POOL_NAME = "engine-metrics";

	/** How one fetch ends: exactly one call. */
	interface Callback {

		/**
		 * The whole body has arrived.
		 * @param body the buffer given to {@link #fetch}, holding the body
		 */
		void succeeded(ScrapeBody body);

		/**
		 * The fetch failed.
		 * @param ex what went wrong: {@link ScrapeFailedException},
		 * {@link TimeoutException} or the network's exception
		 */
		void failed(Throwable ex);

	}

	/**
	 * One: fetches take turns on one kept-alive connection (a start-up read of the bucket
	 * edges waits for the first scrape, or the other way round).
	 */
	private static final int MAX_CONNECTIONS = 1;

	/**
	 * Longer than any fetch: each fetch's own timeout bounds its wait for the connection.
	 */
	private static final Duration ACQUIRE_WAIT = Duration.ofMinutes(1);

	private static final Duration MAX_IDLE = Duration.ofSeconds(4);

	private static final Duration CLOSE_WAIT = Duration.ofSeconds(2);

	/** Set on a connection once it carried a response: reused from then on. */
	private static final AttributeKey<Boolean> ANSWERED = AttributeKey.valueOf(MetricsClient.class, "answered");

	/**
	 * The URL, passed to Reactor Netty as a {@link URI}: its String overload reads a
	 * one-digit port as part of the host name.
	 */
	private final URI target;

	private final DataSize maxSize;

	private final LoopResources loops;

	private final EventLoop loop;

	private final Scheduler timer;

	private final ConnectionProvider pool;

	private final HttpClient http;

	private volatile boolean closed;

	/**
	 * @param url the metrics URL, {@code http} or {@code https}
	 * @param connectTimeout the longest wait for a connection
	 * @param maxSize the cap on a body's size
	 * @param ssl the bundle that trusts an {@code https} URL, or null for the JVM's
	 * default trust (host names are verified either way)
	 */
	MetricsClient(URI url, Duration connectTimeout, DataSize maxSize, SslBundle ssl) {
		String path = (url.getRawPath() == null || url.getRawPath().isEmpty()) ? "/" : url.getRawPath();
		this.target = URI.create(url.getScheme() + "://" + url.getRawAuthority() + path
				+ ((url.getRawQuery() != null) ? "?" + url.getRawQuery() : ""));
		this.maxSize = maxSize;
		this.loops = LoopResources.create("tokengap-scrape", 1, true);
		this.loop = this.loops.onClient(LoopResources.hasNativeSupport()).next();
		this.timer = Schedulers.fromExecutorService(this.loop, "tokengap-scrape");
		this.pool = HttpClients.pool(POOL_NAME, MAX_CONNECTIONS, ACQUIRE_WAIT, MAX_IDLE, null);
		HttpClient client = HttpClients.create(this.pool, this.loops, connectTimeout)
			.headers((headers) -> headers.set(HttpHeaderNames.ACCEPT, "text/plain")
				.set(HttpHeaderNames.USER_AGENT, "tokengap"))
			.doOnRequest((request, connection) -> request.currentContextView()
				.<Attempt>getOrEmpty(Attempt.class)
				.ifPresent((attempt) -> attempt.reused = connection.channel().hasAttr(ANSWERED)));
		this.http = "https".equalsIgnoreCase(url.getScheme()) ? HttpClients.secure(client, ssl) : client;
	}

	/**
	 * The loop the connections and the fetches' timeouts run on, for the scraper's timer.
	 */
	EventLoop loop() {
		return this.loop;
	}

	/**
	 * Reads the body into the buffer, which is reset when the response head has arrived.
	 * @param into the buffer, whose cap must be the client's
	 * @param timeout the longest the whole fetch may take
	 * @param callback told exactly once
	 */
	void fetch(ScrapeBody into, Duration timeout, Callback callback) {
		body(into, timeout).subscribe(callback::succeeded, callback::failed);
	}

	/**
	 * {@link #fetch} as a {@link Mono} of the body's text, for start-up.
	 * @param into the buffer, whose cap must be the client's
	 * @param timeout the longest the whole fetch may take
	 * @return the body as text
	 */
	Mono<String> fetch(ScrapeBody into, Duration timeout) {
		return body(into, timeout).map(ScrapeBody::text);
	}

	private Mono<ScrapeBody> body(ScrapeBody into, Duration timeout) {
		if (this.closed) {
			return Mono.error(new ScrapeFailedException("client closed"));
		}
		// The timeout runs on the connections' loop: a fetch cancelled by it copies
		// nothing more into the buffer that the next fetch fills.
		return Mono.defer(() -> attempt(into, true))
			.onErrorMap(PrematureCloseException.class,
					(ex) -> new ScrapeFailedException("connection closed before the response ended", ex))
			.timeout(Mono.delay(timeout, this.timer),
					Mono.error(() -> new TimeoutException("no answer within " + timeout.toMillis() + "ms")))
			.onErrorMap((ex) -> this.closed && !(ex instanceof ScrapeFailedException),
					(ex) -> new ScrapeFailedException("client closed", ex));
	}

	/** One request, and one more on a new connection when a kept one proved stale. */
	private Mono<ScrapeBody> attempt(ScrapeBody into, boolean mayRetry) {
		Attempt attempt = new Attempt();
		Mono<ScrapeBody> once = this.http.get()
			.uri(this.target)
			.responseConnection((response, connection) -> read(response, connection, into, attempt))
			.next()
			.contextWrite(Context.of(Attempt.class, attempt));
		if (!mayRetry) {
			return once;
		}
		return once.onErrorResume((ex) -> attempt.stale(ex), (ex) -> attempt(into, false));
	}

	private Mono<ScrapeBody> read(HttpClientResponse response, Connection connection, ScrapeBody into,
			Attempt attempt) {
		attempt.answered = true;
		connection.channel().attr(ANSWERED).set(Boolean.TRUE);
		int status = response.status().code();
		if (status != 200) {
			return abandon(connection, new ScrapeFailedException("HTTP " + status));
		}
		String length = response.responseHeaders().get(HttpHeaderNames.CONTENT_LENGTH);
		if (length != null && declaredOverCap(length)) {
			return abandon(connection, tooBig());
		}
		into.reset();
		// Reactor Netty releases each buffer after it is handed on, and those still
		// queued when the body is cancelled or the connection closes.
		return connection.inbound()
			.receive()
			.doOnNext((buffer) -> append(into, buffer))
			.doOnError((ex) -> connection.dispose())
			.doOnCancel(connection::dispose)
			.then(Mono.just(into));
	}

	private void append(ScrapeBody into, ByteBuf buffer) {
		if (!into.append(buffer)) {
			throw tooBig();
		}
	}

	private boolean declaredOverCap(String length) {
		try {
			return Long.parseLong(length.trim()) > this.maxSize.toBytes();
		}
		catch (NumberFormatException ex) {
			return false;
		}
	}

	/** Closes a connection whose response is not read to its end. */
	private static Mono<ScrapeBody> abandon(Connection connection, ScrapeFailedException failure) {
		connection.dispose();
		return Mono.error(failure);
	}

	private ScrapeFailedException tooBig() {
		return new ScrapeFailedException("body exceeds max-scrape-size " + this.maxSize);
	}

	/**
	 * Stops the client: a fetch in flight fails, the connections close and the loop ends
	 * (waited for up to 2 s, unless called on the loop).
	 */
	@Override
	public void close() {
		this.closed = true;
		Mono<Void> closing = this.pool.disposeLater().then(this.loops.disposeLater(Duration.ZERO, CLOSE_WAIT));
		if (this.loop.inEventLoop()) {
			closing.subscribe();
		}
		else {
			closing.block(CLOSE_WAIT.plusMillis(500));
		}
	}

	/** What one request learned about its connection. */
	private static final class Attempt {

		volatile boolean reused;

		volatile boolean answered;

		/**
		 * Whether the failure says that a kept-alive connection was closed by the engine
		 * before it answered: nothing was read, so asking again is safe.
		 */
		boolean stale(Throwable ex) {
			return this.reused && !this.answered && ex instanceof IOException;
		}

	}

}
