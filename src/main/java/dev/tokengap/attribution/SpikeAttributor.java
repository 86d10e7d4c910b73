package dev.tokengap.attribution;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import dev.tokengap.backend.EngineHistory;
import dev.tokengap.backend.EngineSample;
import dev.tokengap.metrics.TokengapMeters;
import dev.tokengap.timing.GapObserver;
import dev.tokengap.timing.LogRateLimiter;
import dev.tokengap.timing.NanoClock;

/**
 * Attributes each spike once the engine samples around it have been scraped: gathers the
 * evidence, picks the cause, records {@code tokengap_gap_spike_seconds{cause}}, logs one line and
 * keeps the last records. Runs on its own thread, never on an event loop; a spike is judged one
 * scrape interval after its gap closed plus the scrape timeout.
 */
public final class SpikeAttributor implements AutoCloseable {

	private static final Log logger = LogFactory.getLog("tokengap.spikes");

	static final int MAX_PENDING = 10_000;

	private static final EngineSample[] NO_SAMPLES = {};

	private final AttributionProperties properties;

	private final EngineHistory history;

	private final TokengapMeters meters;

	private final NanoClock clock;

	private final long intervalNanos;

	private final long delayNanos;

	private final FirstTokenLog firstTokens = new FirstTokenLog(4096);

	private final SpikeDetector detector;

	private final LogRateLimiter logLimiter;

	private final ScheduledExecutorService executor;

	private final AtomicInteger pending = new AtomicInteger();

	private final ArrayDeque<SpikeRecord> records = new ArrayDeque<>();

	private volatile boolean dropLogged;

	/**
	 * Creates the attributor and its detector.
	 * @param properties thresholds
	 * @param history the engine samples
	 * @param meters where spikes are recorded
	 * @param clock the clock events are timed with
	 * @param scrapeInterval the engine scrape interval
	 * @param scrapeTimeout the engine scrape timeout
	 */
	public SpikeAttributor(AttributionProperties properties, EngineHistory history, TokengapMeters meters,
			NanoClock clock, Duration scrapeInterval, Duration scrapeTimeout) {
		this.properties = properties;
		this.history = history;
		this.meters = meters;
		this.clock = clock;
		this.intervalNanos = scrapeInterval.toNanos();
		this.delayNanos = scrapeInterval.toNanos() + scrapeTimeout.toNanos();
		this.detector = new SpikeDetector(properties, this.firstTokens, this::submit);
		this.logLimiter = new LogRateLimiter(properties.logLinesPerSecond(), clock);
		this.executor = Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = new Thread(task, "tokengap-attribution");
			thread.setDaemon(true);
			return thread;
		});
	}

	/** @return the observer to give the meters, so it sees every gap */
	public GapObserver detector() {
		return this.detector;
	}

	void submit(Spike spike) {
		if (this.pending.incrementAndGet() > MAX_PENDING) {
			this.pending.decrementAndGet();
			if (!this.dropLogged) {
				this.dropLogged = true;
				logger.warn("More than " + MAX_PENDING + " spikes awaiting attribution; dropping (logged once)");
			}
			return;
		}
		long due = spike.arrivalNanos() + this.delayNanos - this.clock.nanoTime();
		try {
			this.executor.schedule(() -> attribute(spike), Math.max(0, due), TimeUnit.NANOSECONDS);
		}
		catch (java.util.concurrent.RejectedExecutionException ex) {
			this.pending.decrementAndGet();
		}
	}

	private void attribute(Spike spike) {
		this.pending.decrementAndGet();
		try {
			// A scrape or two may fail under load; older samples no longer describe the gap.
			long stale = 4 * this.intervalNanos;
			// Behind a pool the samples come from whichever engine answered: they describe none.
			EngineSample[] window = (this.history.engines() > 1) ? NO_SAMPLES
					: this.history.window(spike.previousArrivalNanos() - this.intervalNanos,
							spike.arrivalNanos() + this.intervalNanos);
			Evidence evidence = Evidence.of(spike, window,
					stale, this.firstTokens.between(spike.previousArrivalNanos(),
							spike.arrivalNanos() + Math.min(spike.upstreamGapNanos() / 4, 50_000_000L)));
			SpikeCause cause = CauseRules.decide(spike, evidence, this.properties);
			SpikeRecord record = SpikeRecord.of(spike, cause, evidence);
			this.meters.recordSpike(spike.model(), cause.label(), spike.gapNanos() / 1e9);
			keep(record);
			log(record, evidence);
		}
		catch (RuntimeException ex) {
			logger.warn("Attributing a spike failed; streams are unaffected", ex);
		}
	}

	private void log(SpikeRecord record, Evidence evidence) {
		if (!logger.isInfoEnabled()) {
			return;
		}
		long skipped = this.logLimiter.tryAcquire();
		if (skipped < 0) {
			return;
		}
		logger.info("spike request_id=" + record.requestId() + " model=" + record.model() + " endpoint="
				+ record.endpoint() + " choice=" + record.choice() + " token=" + record.tokenIndex() + " gap_ms=" + record.gapMs()
				+ " upstream_gap_ms=" + record.upstreamGapMs() + " write_delay_ms=" + record.writeDelayMs()
				+ " socket_wait_ms=" + record.socketWaitMs() + " cause=" + record.cause() + " evidence=" + evidence
				+ ((skipped > 0) ? " (" + skipped + " earlier spikes not logged: over "
						+ this.properties.logLinesPerSecond() + " lines/s; all are counted and kept)" : ""));
	}

	private void keep(SpikeRecord record) {
		synchronized (this.records) {
			this.records.addFirst(record);
			while (this.records.size() > this.properties.history()) {
				this.records.removeLast();
			}
		}
	}

	/** @return the kept spike records, newest first */
	public List<SpikeRecord> records() {
		synchronized (this.records) {
			return new ArrayList<>(this.records);
		}
	}

	@Override
	public void close() {
		this.executor.shutdownNow();
	}

}
