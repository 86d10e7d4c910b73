package dev.tokengap.backend;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpHeaderNames;
import org.awaitility.core.ConditionFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.test.StepVerifier;

import org.springframework.util.unit.DataSize;

import dev.tokengap.metrics.BucketEdges;
import dev.tokengap.testsupport.ScriptedUpstream;
import dev.tokengap.timing.NanoClock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

class MetricsScraperTests {

	private static final Duration DEADLINE = Duration.ofSeconds(10);

	private static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

	private static final String V1_FULL = MetricsFixtures.exposition(MetricsFixtures.V1_FULL);

	// The scraper must stamp samples with the injected clock, not System.nanoTime().
	private static final long CLOCK_OFFSET = 1L << 60;

	private final ScriptedUpstream engine = ScriptedUpstream.start();

	private final EngineHistory history = new EngineHistory(256);

	private final RecordingListener listener = new RecordingListener();

	private MetricsScraper scraper;

	@AfterEach
	void stop() {
		if (this.scraper != null) {
			this.scraper.close();
		}
		this.engine.close();
	}

	@Test
	void scrapesTheEngineIntoTheHistoryEveryInterval() {
		this.engine.respond(200, CONTENT_TYPE, V1_FULL);
		scraper(Duration.ofMillis(100), Duration.ofMillis(80), DataSize.ofMegabytes(4)).start();
		waiting().until(() -> this.listener.samples.size() >= 3);
		// The very first scrape may pay for class loading on a busy machine;
		// from then on all succeed.
		List<String> outcomes = List.copyOf(this.listener.outcomes);
		assertThat(outcomes.subList(outcomes.indexOf("scraped"), outcomes.size())).containsOnly("scraped");
		EngineSample[] samples = this.history.window(Long.MIN_VALUE, Long.MAX_VALUE);
		assertThat(samples.length).isGreaterThanOrEqualTo(3);
		assertThat(samples[0]).isEqualTo(this.listener.samples.get(0));
		assertThat(samples[0].nanos()).isGreaterThan(CLOCK_OFFSET);
		assertThat(samples[1].nanos()).isGreaterThan(samples[0].nanos());
		assertThat(samples[0]).extracting(EngineSample::running, EngineSample::kvUsage, EngineSample::generationTokens)
			.containsExactly(0.0, 0.0, 0.0);
		assertThat(samples[0].swapped()).isNaN();
		assertThat(this.listener.durations).allSatisfy((nanos) -> assertThat(nanos).isPositive());
		ScriptedUpstream.Received request = this.engine.received().get(0);
		assertThat(request.method()).isEqualTo("GET");
		assertThat(request.uri()).isEqualTo("/metrics");
		assertThat(request.headers().get(HttpHeaderNames.ACCEPT)).isEqualTo("text/plain");
	}

	@Test
	void failsAScrapeThatOutlastsTheTimeoutAndNeverOverlapsTwo() {
		AtomicInteger open = new AtomicInteger();
		AtomicInteger mostOpen = new AtomicInteger();
		this.engine.handle((request, response) -> {
			mostOpen.accumulateAndGet(open.incrementAndGet(), Math::max);
			return response.withConnection((connection) -> connection.onDispose(open::decrementAndGet))
				.sendString(Mono.delay(Duration.ofSeconds(5)).thenReturn(V1_FULL));
		});
		scraper(Duration.ofMillis(200), Duration.ofMillis(50), DataSize.ofMegabytes(4)).start();
		waiting().until(() -> this.listener.failures.size() >= 4);
		// the first scrape after start-up is allowed more
		// (firstScrapeAfterStartUpMayTakeLonger)
		assertThat(this.listener.failures.get(0)).isEqualTo("timed out after 2000ms");
		assertThat(this.listener.durations.get(0)).isGreaterThanOrEqualTo(Duration.ofSeconds(2).toNanos());
		List<String> later = List.copyOf(this.listener.failures).subList(1, 4);
		assertThat(later).allSatisfy((reason) -> assertThat(reason).isEqualTo("timed out after 50ms"));
		assertThat(List.copyOf(this.listener.durations).subList(1, 4))
			.allSatisfy((nanos) -> assertThat(nanos).isGreaterThanOrEqualTo(Duration.ofMillis(50).toNanos()));
		assertThat(this.history.isEmpty()).isTrue();
		assertThat(mostOpen.get()).isEqualTo(1);
	}

	/**
	 * The first scrape after start-up loads and compiles the scrape path while the rest
	 * of the application starts: it may take up to 2 s, so that a start does not log and
	 * count a failed scrape the engine never caused. Every scrape after it, successful or
	 * not, is bounded by the configured timeout.
	 */
	@Test
	void firstScrapeAfterStartUpMayTakeLonger() {
		AtomicInteger requests = new AtomicInteger();
		this.engine.handle((request, response) -> response.sendString(
				Mono.delay(Duration.ofMillis((requests.incrementAndGet() == 1) ? 600 : 5_000)).thenReturn(V1_FULL)));
		scraper(Duration.ofMillis(250), Duration.ofMillis(200), DataSize.ofMegabytes(4));
		assertThat(this.scraper.scrapeTimeout()).isEqualTo(Duration.ofSeconds(2));
		this.scraper.start();
		waiting().until(() -> this.listener.samples.size() == 1);
		assertThat(this.listener.failures).isEmpty();
		assertThat(this.scraper.scrapeTimeout()).isEqualTo(Duration.ofMillis(200));
		waiting().until(() -> !this.listener.failures.isEmpty());
		assertThat(this.listener.failures.get(0)).isEqualTo("timed out after 200ms");
	}

	@Test
	void aConfiguredTimeoutLongerThanTheAllowanceAppliesFromTheFirstScrape() {
		scraper(Duration.ofSeconds(10), Duration.ofSeconds(5), DataSize.ofMegabytes(4));
		assertThat(this.scraper.scrapeTimeout()).isEqualTo(Duration.ofSeconds(5));
	}

	@Test
	void skipsATickWhileAScrapeIsInFlight() {
		Sinks.Empty<Void> release = Sinks.empty();
		this.engine.handle((request, response) -> response.sendString(release.asMono().thenReturn(V1_FULL)));
		scraper(Duration.ofSeconds(10), Duration.ofSeconds(5), DataSize.ofMegabytes(4));
		assertThat(this.scraper.tick()).isTrue();
		waiting().until(() -> this.engine.received().size() == 1);
		assertThat(this.scraper.tick()).isFalse();
		assertThat(this.scraper.skippedTicks()).isEqualTo(1);
		release.tryEmitEmpty();
		waiting().until(() -> this.listener.samples.size() == 1);
		waiting().until(this.scraper::tick);
		waiting().until(() -> this.listener.samples.size() == 2);
		assertThat(this.engine.received()).hasSize(2);
		assertThat(this.scraper.skippedTicks()).isEqualTo(1);
	}

	@ParameterizedTest(name = "declared length: {0}")
	@ValueSource(booleans = { false, true })
	void abandonsABodyOverTheSizeCapWellBeforeTheTimeout(boolean declared) {
		byte[] chunk = ("# " + "x".repeat(8189) + "\n").getBytes(StandardCharsets.US_ASCII);
		if (declared) {
			this.engine.respond(200, CONTENT_TYPE, new String(chunk, StandardCharsets.US_ASCII).repeat(64));
		}
		else {
			// Chunked and endless: only the cap can end it.
			this.engine.handle((request, response) -> response.header(HttpHeaderNames.CONTENT_TYPE, CONTENT_TYPE)
				.send(Flux.generate((sink) -> sink.next(Unpooled.wrappedBuffer(chunk)))));
		}
		DataSize cap = DataSize.ofKilobytes(256);
		scraper(Duration.ofSeconds(5), Duration.ofSeconds(4), cap);
		assertThat(this.scraper.tick()).isTrue();
		waiting().until(() -> this.listener.failures.size() == 1);
		assertThat(this.listener.failures.get(0)).isEqualTo("body exceeds max-scrape-size 262144B");
		assertThat(this.listener.durations.get(0)).isLessThan(Duration.ofSeconds(2).toNanos());
		assertThat(this.scraper.bodyCapacity()).isLessThanOrEqualTo((int) cap.toBytes());
		assertThat(this.history.isEmpty()).isTrue();
	}

	@Test
	void failsOnABodyWithoutVllmMetrics() {
		this.engine.respond(200, "text/html", "<html><body>It works!</body></html>");
		scrapeOnce();
		assertThat(this.listener.failures).containsExactly("no vLLM engine metrics in the body");
	}

	@ParameterizedTest
	@ValueSource(ints = { 500, 404, 503 })
	void failsOnAnErrorStatus(int status) {
		this.engine.respond(status, CONTENT_TYPE, V1_FULL);
		scrapeOnce();
		assertThat(this.listener.failures).containsExactly("HTTP " + status);
		assertThat(this.history.isEmpty()).isTrue();
	}

	@Test
	void failsWhenNothingListens() {
		DisposableServer closed = HttpServer.create().host("127.0.0.1").port(0).bindNow();
		closed.disposeNow(DEADLINE);
		scraper(URI.create("http://127.0.0.1:" + closed.port() + "/metrics"), Duration.ofSeconds(5),
				Duration.ofSeconds(4), DataSize.ofMegabytes(4));
		scrapeOnce();
		assertThat(this.listener.failures).singleElement()
			.satisfies((reason) -> assertThat(reason).startsWith("connection failed: "));
	}

	@Test
	void recoversOnTheNextTickAfterFailures() {
		this.engine.respond(500, "text/plain", "engine dead");
		scraper(Duration.ofMillis(50), Duration.ofMillis(40), DataSize.ofMegabytes(4)).start();
		waiting().until(() -> this.listener.failures.size() >= 2);
		this.engine.respond(200, CONTENT_TYPE, V1_FULL);
		waiting().until(() -> this.listener.samples.size() >= 2);
		assertThat(this.history.latest()).isEqualTo(this.listener.samples.get(this.listener.samples.size() - 1));
		List<String> outcomes = List.copyOf(this.listener.outcomes);
		int firstSuccess = outcomes.indexOf("scraped");
		assertThat(outcomes.subList(0, firstSuccess)).containsOnly("failed").hasSizeGreaterThanOrEqualTo(2);
	}

	@Test
	void keepsScrapingWhenTheListenerThrows() {
		this.engine.respond(200, CONTENT_TYPE, V1_FULL);
		ScrapeProperties properties = properties(Duration.ofMillis(50), Duration.ofMillis(40), DataSize.ofMegabytes(4));
		this.scraper = new MetricsScraper(URI.create(this.engine.url() + "/metrics"), properties, this.history,
				NanoClock.SYSTEM, new ScrapeListener() {

					@Override
					public void scraped(EngineSample sample, long durationNanos) {
						throw new IllegalStateException("listener bug");
					}

					@Override
					public void failed(String reason, long durationNanos) {
						throw new IllegalStateException("listener bug");
					}

				});
		this.scraper.start();
		waiting().until(() -> this.history.window(Long.MIN_VALUE, Long.MAX_VALUE).length >= 3);
	}

	@Test
	void stopsOnClose() {
		this.engine.respond(200, CONTENT_TYPE, V1_FULL);
		scraper(Duration.ofMillis(50), Duration.ofMillis(40), DataSize.ofMegabytes(4)).start();
		waiting().until(() -> this.listener.samples.size() >= 1);
		this.scraper.close();
		assertThat(this.scraper.tick()).isFalse();
		int requests = this.engine.received().size();
		await().during(Duration.ofMillis(300))
			.atMost(Duration.ofSeconds(2))
			.until(() -> this.engine.received().size() <= requests + 1);
	}

	@Test
	void readsTheEnginesBucketEdges() {
		this.engine.respond(200, CONTENT_TYPE, V1_FULL);
		scraper(Duration.ofSeconds(5), Duration.ofSeconds(4), DataSize.ofMegabytes(4));
		StepVerifier.create(this.scraper.readEdges(Duration.ofSeconds(5)))
			.expectNext(BucketEdges.VLLM_V1)
			.expectComplete()
			.verify(DEADLINE);
	}

	@Test
	void readsNoBucketEdgesFromAnEngineThatHasNone() {
		this.engine.respond(200, CONTENT_TYPE, MetricsFixtures.exposition(MetricsFixtures.DESIGN_DOC_EXCERPT));
		scraper(Duration.ofSeconds(5), Duration.ofSeconds(4), DataSize.ofMegabytes(4));
		StepVerifier.create(this.scraper.readEdges(Duration.ofSeconds(5))).expectComplete().verify(DEADLINE);
		this.engine.respond(500, "text/plain", "down");
		StepVerifier.create(this.scraper.readEdges(Duration.ofSeconds(5))).expectComplete().verify(DEADLINE);
	}

	@Test
	void givesUpReadingBucketEdgesAfterTheWait() {
		this.engine
			.handle((request, response) -> response.sendString(Mono.delay(Duration.ofSeconds(5)).thenReturn(V1_FULL)));
		scraper(Duration.ofSeconds(5), Duration.ofSeconds(4), DataSize.ofMegabytes(4));
		long start = System.nanoTime();
		StepVerifier.create(this.scraper.readEdges(Duration.ofMillis(100))).expectComplete().verify(DEADLINE);
		assertThat(System.nanoTime() - start).isLessThan(Duration.ofSeconds(3).toNanos());
	}

	private static ConditionFactory waiting() {
		return await().atMost(DEADLINE).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(10));
	}

	private void scrapeOnce() {
		if (this.scraper == null) {
			scraper(Duration.ofSeconds(5), Duration.ofSeconds(4), DataSize.ofMegabytes(4));
		}
		assertThat(this.scraper.tick()).isTrue();
		waiting().until(() -> this.listener.outcomes.size() == 1);
	}

	private MetricsScraper scraper(Duration interval, Duration timeout, DataSize maxSize) {
		return scraper(URI.create(this.engine.url() + "/metrics"), interval, timeout, maxSize);
	}

	private MetricsScraper scraper(URI url, Duration interval, Duration timeout, DataSize maxSize) {
		NanoClock clock = () -> System.nanoTime() + CLOCK_OFFSET;
		this.scraper = new MetricsScraper(url, properties(interval, timeout, maxSize), this.history, clock,
				this.listener);
		return this.scraper;
	}

	private static ScrapeProperties properties(Duration interval, Duration timeout, DataSize maxSize) {
		return new ScrapeProperties(true, interval, null, timeout, maxSize, interval.multipliedBy(100));
	}

	/** Records every outcome, in order. */
	private static final class RecordingListener implements ScrapeListener {

		final List<String> outcomes = new CopyOnWriteArrayList<>();

		final List<EngineSample> samples = new CopyOnWriteArrayList<>();

		final List<String> failures = new CopyOnWriteArrayList<>();

		final List<Long> durations = new CopyOnWriteArrayList<>();

		@Override
		public void scraped(EngineSample sample, long durationNanos) {
			this.samples.add(sample);
			this.durations.add(durationNanos);
			this.outcomes.add("scraped");
		}

		@Override
		public void failed(String reason, long durationNanos) {
			this.failures.add(reason);
			this.durations.add(durationNanos);
			this.outcomes.add("failed");
		}

	}

}
