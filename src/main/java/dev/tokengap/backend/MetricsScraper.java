package dev.tokengap.backend;

import java.net.ConnectException;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import io.netty.util.concurrent.ScheduledFuture;
import reactor.core.publisher.Mono;

import org.springframework.boot.ssl.SslBundle;

import dev.tokengap.metrics.BucketEdges;
import dev.tokengap.timing.NanoClock;

/**
 * Scrapes the engine's {@code /metrics} every interval into an {@link EngineHistory} and
 * tells a {@link ScrapeListener} how each scrape went.
 *
 * <pre>
 * tick ──► in flight? ──yes──► skip
 *              │no
 *              ▼
 *   GET /metrics ─► status 200? ─► copy body (cap) ─► parse ─► which engine? (rebase counters)
 *                                                  ─► history.append ─► listener.scraped
 *        └──── timeout, refused, non-200, too big, no vLLM metrics ─────────────► listener.failed
 * </pre>
 *
 * At most one scrape is in flight, each bounded by {@code scrape-timeout} and
 * {@code max-scrape-size}; a failure is reported, never thrown, and the next tick tries
 * again. The timer, the fetch and the parse all run on the {@link MetricsClient}'s own
 * event loop ({@code tokengap-scrape}), off the proxy's loops: nothing blocks, and no
 * thread is woken but that one. The client is tokengap's Reactor Netty client, with a
 * pool of its own ({@code engine-metrics}).
 */
public final class MetricsScraper implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(MetricsScraper.class);

	/**
	 * The longest the first scrape after start-up may take, when the configured timeout
	 * is shorter. It loads and compiles the scrape path (client, codec, parser) while the
	 * rest of the application starts: 0.45 s on a 2-core machine, against a 200 ms
	 * timeout, so every start logged a failed scrape and counted a scrape error that the
	 * engine never caused. Every later scrape is bounded by {@code scrape-timeout}.
	 */
	static final Duration FIRST_SCRAPE_TIMEOUT = Duration.ofSeconds(2);

	private final URI url;

	private final ScrapeProperties properties;

	private final int maxBytes;

	private final EngineHistory history;

	private final NanoClock clock;

	private final ScrapeListener listener;

	private final MetricsClient client;

	private final AtomicBoolean inFlight = new AtomicBoolean();

	private final AtomicLong skippedTicks = new AtomicLong();

	private final AtomicBoolean listenerFailureLogged = new AtomicBoolean();

	// Used only by the scrape in flight; handed over between scrapes through inFlight.
	private final VllmMetricsReader reader = new VllmMetricsReader();

	private final EngineRoster roster;

	// Reused by every periodic scrape: one is in flight at a time, and the client drops
	// what a timed-out one would still have read.
	private final ScrapeBody body;

	private volatile Boolean lastUp;

	private volatile boolean closed;

	private volatile ScheduledFuture<?> ticks;

	// When the scrape in flight started; handed over between scrapes through inFlight.
	private long scrapeStart;

	private final Scraped scraped = new Scraped();

	/**
	 * Creates the scraper; call {@link #start()} to begin.
	 * @param url the metrics URL (see {@link ScrapeProperties#resolveMetricsUrl(URI)})
	 * @param properties interval, timeout and size cap
	 * @param history receives every successful sample
	 * @param clock stamps samples and times scrapes
	 * @param listener told about every scrape
	 */
	public MetricsScraper(URI url, ScrapeProperties properties, EngineHistory history, NanoClock clock,
			ScrapeListener listener) {
		this(url, properties, history, clock, listener, null);
	}

	/**
	 * Creates the scraper; call {@link #start()} to begin.
	 * @param url the metrics URL (see {@link ScrapeProperties#resolveMetricsUrl(URI)})
	 * @param properties interval, timeout and size cap
	 * @param history receives every successful sample
	 * @param clock stamps samples and times scrapes
	 * @param listener told about every scrape
	 * @param ssl the bundle that trusts an {@code https://} metrics URL, or null for the
	 * JVM's default trust
	 */
	public MetricsScraper(URI url, ScrapeProperties properties, EngineHistory history, NanoClock clock,
			ScrapeListener listener, SslBundle ssl) {
		this.url = url;
		this.properties = properties;
		this.maxBytes = (int) properties.maxScrapeSize().toBytes();
		this.history = history;
		this.clock = clock;
		this.listener = listener;
		this.body = new ScrapeBody(this.maxBytes);
		this.client = new MetricsClient(url, properties.scrapeTimeout(), properties.maxScrapeSize(), ssl);
		this.roster = new EngineRoster(url.toString(), properties.history().toNanos());
	}

	/** Scrapes now and then every interval, unless scraping is disabled. */
	public synchronized void start() {
		if (!this.properties.enabled() || this.closed || this.ticks != null) {
			return;
		}
		logger.info("Scraping " + this.url + " every " + this.properties.scrapeInterval().toMillis() + "ms");
		// On the client's own loop, as its callbacks: no thread is woken for a tick.
		long interval = this.properties.scrapeInterval().toNanos();
		this.ticks = this.client.loop().scheduleAtFixedRate(this::scheduledTick, 0, interval, TimeUnit.NANOSECONDS);
	}

	private void scheduledTick() {
		try {
			tick();
		}
		catch (RuntimeException ex) {
			// A task that throws is never run again: log and go on with the next tick.
			logger.error("Scrape of " + this.url + " could not start", ex);
		}
	}

	/**
	 * Starts a scrape unless one is in flight.
	 * @return whether a scrape started
	 */
	boolean tick() {
		if (this.closed) {
			return false;
		}
		if (!this.inFlight.compareAndSet(false, true)) {
			this.skippedTicks.incrementAndGet();
			return false;
		}
		this.scrapeStart = this.clock.nanoTime();
		this.client.fetch(this.body, scrapeTimeout(), this.scraped);
		return true;
	}

	/** Ticks skipped because the previous scrape was still in flight. */
	long skippedTicks() {
		return this.skippedTicks.get();
	}

	/** The capacity of the body buffer, which never exceeds {@code max-scrape-size}. */
	int bodyCapacity() {
		return this.body.capacity();
	}

	/**
	 * Reads the engine's histogram bucket edges once, for the {@code auto} bucket
	 * profile.
	 * @param wait the longest wait for the answer
	 * @return the edges, or empty when the engine cannot be read in time or lacks a
	 * family
	 */
	public Mono<BucketEdges> readEdges(Duration wait) {
		return Mono.defer(() -> this.client.fetch(new ScrapeBody(this.maxBytes), wait))
			.mapNotNull((text) -> new VllmMetricsReader().readEdges(text))
			.doOnError((ex) -> logger.debug("Could not read bucket edges from " + this.url + ": " + ex))
			.onErrorResume((ex) -> Mono.empty());
	}

	/** Ends each periodic scrape, on the client's loop. */
	private final class Scraped implements MetricsClient.Callback {

		@Override
		public void succeeded(ScrapeBody body) {
			long start = MetricsScraper.this.scrapeStart;
			try {
				MetricsScraper.this.succeeded(toSample(body.text()), start);
			}
			catch (RuntimeException ex) {
				// a body without vLLM metrics, or a parse or history failure
				MetricsScraper.this.failed(ex, start);
			}
			finally {
				MetricsScraper.this.inFlight.set(false);
			}
		}

		@Override
		public void failed(Throwable ex) {
			try {
				MetricsScraper.this.failed(ex, MetricsScraper.this.scrapeStart);
			}
			finally {
				MetricsScraper.this.inFlight.set(false);
			}
		}

	}

	/** The timeout of the next scrape: the first one after start-up gets more. */
	Duration scrapeTimeout() {
		Duration configured = this.properties.scrapeTimeout();
		if (this.lastUp != null || configured.compareTo(FIRST_SCRAPE_TIMEOUT) >= 0) {
			return configured;
		}
		return FIRST_SCRAPE_TIMEOUT;
	}

	private EngineSample toSample(String text) {
		EngineSample sample = this.reader.read(text, this.clock.nanoTime());
		if (sample == null) {
			throw new ScrapeFailedException("no vLLM engine metrics in the body");
		}
		// Behind one URL may be another engine than last time, or the same one restarted.
		EngineSample rebased = this.roster.admit(sample, this.reader.identity());
		this.history.engines(this.roster.engines());
		return rebased;
	}

	private void succeeded(EngineSample sample, long start) {
		this.history.append(sample);
		if (!Boolean.TRUE.equals(this.lastUp)) {
			logger.info("Scrape of " + this.url + ((this.lastUp == null) ? " succeeded" : " recovered"));
		}
		this.lastUp = true;
		try {
			this.listener.scraped(sample, sample.nanos() - start);
		}
		catch (RuntimeException ex) {
			listenerFailed(ex);
		}
	}

	private void failed(Throwable ex, long start) {
		String reason = reason(ex);
		logFailure(reason);
		if (this.closed) {
			// Ended by close(): not the engine's failure.
			return;
		}
		this.lastUp = false;
		try {
			this.listener.failed(reason, this.clock.nanoTime() - start);
		}
		catch (RuntimeException listenerFailure) {
			listenerFailed(listenerFailure);
		}
	}

	// A warning when the engine goes down, not one per tick while it stays down.
	private void logFailure(String reason) {
		if (this.closed) {
			logger.debug("Scrape of " + this.url + " ended by close: " + reason);
		}
		else if (!Boolean.FALSE.equals(this.lastUp)) {
			logger.warn("Scrape of " + this.url + " failed (" + reason + "); retrying every "
					+ this.properties.scrapeInterval().toMillis() + "ms");
		}
		else if (logger.isDebugEnabled()) {
			logger.debug("Scrape of " + this.url + " failed: " + reason);
		}
	}

	private void listenerFailed(RuntimeException ex) {
		if (this.listenerFailureLogged.compareAndSet(false, true)) {
			logger.warn("Scrape listener failed (logged once; scraping goes on)", ex);
		}
	}

	private String reason(Throwable ex) {
		if (ex instanceof ScrapeFailedException) {
			return ex.getMessage();
		}
		if (ex instanceof TimeoutException) {
			// the bound that applied: no scrape has ended since this one started
			return "timed out after " + scrapeTimeout().toMillis() + "ms";
		}
		String detail = (ex.getMessage() != null) ? ex.getMessage() : ex.getClass().getSimpleName();
		return (ex instanceof ConnectException) ? "connection failed: " + detail : detail;
	}

	/** Stops scraping, ends a scrape in flight and closes the client. */
	@Override
	public void close() {
		this.closed = true;
		ScheduledFuture<?> schedule = this.ticks;
		if (schedule != null) {
			schedule.cancel(false);
		}
		this.client.close();
	}

}
