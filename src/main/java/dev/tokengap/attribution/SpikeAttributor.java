package dev.tokengap.attribution;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import dev.tokengap.backend.EngineHistory;
import dev.tokengap.backend.EngineSample;
import dev.tokengap.metrics.TokengapMeters;
import dev.tokengap.timing.EngineReport;
import dev.tokengap.timing.GapObserver;
import dev.tokengap.timing.LogRateLimiter;
import dev.tokengap.timing.NanoClock;
import dev.tokengap.timing.StreamTimer;

/**
 * Attributes each spike once the engine samples around it have been scraped: gathers the
 * evidence, picks the cause, logs one line and keeps the last records. Nothing of it runs
 * on an event loop: its {@link #detector() detector} runs there and only hands each spike
 * over, through a bounded queue, to the scan thread ({@code tokengap-spike-scan}), which
 * looks at what the other streams received during the gap within
 * {@link #SCAN_BATCH_WINDOW} of taking the spike, reading them once for all the spikes
 * that came meanwhile; the attribution thread ({@code tokengap-attribution}) judges it
 * one scrape interval after its gap closed plus the scrape timeout, at the next tick of a
 * {@link #JUDGE_TICK_NANOS 25 ms grid}, with the spikes of its batch due at that tick.
 *
 * <pre>
 *  event loop ──(spike, stream)──▶ [hand-off, bounded] ──▶ scan thread: peers during the gap
 *      │ full: counted, judged unknown                          │
 *      └────────────────────────────▶ attribution thread ◀─────┘ engine samples, cause, record
 * </pre>
 *
 * A spike the full hand-off refuses is not lost: it is kept and counted with the cause
 * {@code unknown}, its record saying it was not attributed.
 *
 * <p>
 * When the engine reports its own figures for a request at its end (vLLM's per-request
 * metrics), they correct the stream's spikes (see {@link EngineReportRules}); so a
 * stream's spikes are counted in {@code tokengap_gap_spike_seconds{cause}} once the
 * stream has ended, with the cause they end up with. The records at
 * {@code /actuator/spikes} appear as soon as they are judged and are corrected in place.
 */
public final class SpikeAttributor implements AutoCloseable {

	private static final Log logger = LogFactory.getLog("tokengap.spikes");

	static final int MAX_PENDING = 10_000;

	/** Spikes that may wait for the scan thread at most. */
	static final int HAND_OFF_CAPACITY = 4096;

	/**
	 * How long the scan thread gathers spikes to read the other streams once for all of
	 * them: a pass reads every live stream, so a burst of spikes (at 1,000 streams of 200
	 * ms per token, some 125 a second) costs one pass per window, not one per spike.
	 * Reading a gap's peers this much after it closed reads the same, since their
	 * arrivals after the gap's end are ignored, as long as their rings (the last
	 * {@value StreamTimer#RECENT_ARRIVALS} events) still reach back to its start: at 100
	 * events a second, for gaps up to 1,030 ms; a ring that no longer does is read as a
	 * stream that received throughout. A window of 250 ms makes about four passes a
	 * second of a steady flow of spikes; the spike is judged only after the next engine
	 * scrape anyway.
	 */
	static final Duration SCAN_BATCH_WINDOW = Duration.ofMillis(250);

	/**
	 * The grid spikes are judged on: each at the first tick at or after its due time (one
	 * scrape interval and the scrape timeout after its gap closed), the spikes of one
	 * scan batch that share a tick in one task, so that a burst of spikes wakes the
	 * attribution thread once a tick, not once a spike (at 1,000 streams of 200 ms per
	 * token, some 125 spikes a second, whose waits and wake-ups cost the thread about as
	 * much as their judgements). A stream's end is closed a tick after the tick it falls
	 * on, after the tick of any of its spikes, so that they are judged before it closes.
	 */
	static final long JUDGE_TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(25);

	/**
	 * Streams whose judged spikes wait for their end at most; the oldest is closed early.
	 */
	static final int MAX_OPEN_STREAMS = 10_000;

	/** Events before a gap its stream's pace is taken from. */
	private static final int PACE_EVENTS = 9;

	private static final EngineSample[] NO_SAMPLES = {};

	private final AttributionProperties properties;

	private final EngineHistory history;

	private final TokengapMeters meters;

	private final NanoClock clock;

	private final long intervalNanos;

	private final long delayNanos;

	/** Where the grid of {@link #JUDGE_TICK_NANOS} starts. */
	private final long tickOrigin;

	private final FirstTokenLog firstTokens = new FirstTokenLog(4096);

	private final PeerStreams peers = new PeerStreams();

	/** Judged spikes of streams still open, by stream; the attribution thread's own. */
	private final Map<StreamTimer, List<Judged>> open = new LinkedHashMap<>();

	private final SpikeDetector detector;

	private final LogRateLimiter logLimiter;

	private final ScheduledExecutorService executor;

	/**
	 * Streams with a spike handed over and not yet ended. Only their ends concern this
	 * thread: a stream without spikes ends without a task, so that its end wakes nothing
	 * (a task per request was 1 % of event-loop time at 100 requests/s, plus a wake-up of
	 * this thread). Added to and removed from on the stream's own event loop.
	 */
	private final Set<StreamTimer> spiked = ConcurrentHashMap.newKeySet();

	/**
	 * Ended streams whose spikes wait for the scrapes after their end, with when they
	 * ended.
	 */
	private final Map<StreamTimer, Long> closing = new ConcurrentHashMap<>();

	private final AtomicInteger pending = new AtomicInteger();

	/** Spikes and stream ends the event loops handed over, for tests. */
	private final AtomicLong handedOver = new AtomicLong();

	/** Tasks that judge spikes, for tests. */
	private final AtomicLong judgeTasks = new AtomicLong();

	/** Spikes the full hand-off refused: judged unknown without a look at the others. */
	private final AtomicLong unscanned = new AtomicLong();

	private final SpikeHandOff handOff;

	/**
	 * The history's {@link EngineHistory#appendedCount() count} {@link #prefillRate} was
	 * learned at, -1 before the first; attribution thread only.
	 */
	private long prefillRateAt = -1;

	private Double prefillRate;

	/** How often {@link #prefillRate} was learned from the whole history, for tests. */
	private final AtomicLong prefillRateReads = new AtomicLong();

	/** The last records, newest first; under its own lock. */
	private final ArrayDeque<Kept> records = new ArrayDeque<>();

	private volatile boolean dropLogged;

	private volatile boolean unscannedLogged;

	/** Whether streams' final spikes are kept for {@link #whenSpikesFinal}. */
	private volatile boolean keepFinal;

	/**
	 * Streams with spikes not yet final, while {@link #keepFinal}: each stream's count
	 * and its final records, until {@link #whenSpikesFinal} has them.
	 */
	private final Map<StreamTimer, Outstanding> outstanding = new ConcurrentHashMap<>();

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
		this(properties, history, meters, clock, scrapeInterval, scrapeTimeout, HAND_OFF_CAPACITY,
				(task) -> new Thread(task, "tokengap-spike-scan"));
	}

	SpikeAttributor(AttributionProperties properties, EngineHistory history, TokengapMeters meters, NanoClock clock,
			Duration scrapeInterval, Duration scrapeTimeout, int handOffCapacity, ThreadFactory scanThread) {
		this.properties = properties;
		this.history = history;
		this.meters = meters;
		this.clock = clock;
		this.intervalNanos = scrapeInterval.toNanos();
		this.delayNanos = scrapeInterval.toNanos() + scrapeTimeout.toNanos();
		this.tickOrigin = clock.nanoTime();
		this.detector = new SpikeDetector(properties, this.firstTokens, this.peers, this::submit, this::ended);
		this.logLimiter = new LogRateLimiter(properties.logLinesPerSecond(), clock);
		this.executor = Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = new Thread(task, "tokengap-attribution");
			thread.setDaemon(true);
			return thread;
		});
		this.handOff = new SpikeHandOff(handOffCapacity, SCAN_BATCH_WINDOW, this::scan, scanThread);
	}

	/**
	 * Checks every second, on the attribution thread, whether the engine is stuck (see
	 * {@link StuckEngineDetector}: requests held, its health check answering, and no
	 * content for {@code stuck-after}) and tells {@code stuck} the answer.
	 * @param healthy whether the engine's health check answers
	 * @param stuck told the answer after every check
	 */
	public void watchForStuckEngine(BooleanSupplier healthy, Consumer<Boolean> stuck) {
		StuckEngineDetector detector = new StuckEngineDetector(this.properties.stuckAfter().toNanos(),
				4 * this.intervalNanos, this.history, healthy, this.peers::lastContentNanos, this.clock.nanoTime());
		try {
			this.executor.scheduleWithFixedDelay(() -> checkStuck(detector, stuck), 1, 1, TimeUnit.SECONDS);
		}
		catch (RejectedExecutionException ex) {
			// closed
		}
	}

	private void checkStuck(StuckEngineDetector detector, Consumer<Boolean> stuck) {
		try {
			stuck.accept(detector.stuck(this.clock.nanoTime()));
		}
		catch (RuntimeException ex) {
			logger.warn("Checking for a stuck engine failed; streams are unaffected", ex);
		}
	}

	/**
	 * @return the observer to give the meters, so it sees every gap
	 */
	public GapObserver detector() {
		return this.detector;
	}

	/**
	 * A judged spike, kept until its stream ends, and where its record is kept among the
	 * last ones (corrected there in place).
	 */
	record Judged(Spike spike, SpikeRecord record, Kept kept) {

	}

	/** One of the last records: its latest version. */
	static final class Kept {

		private SpikeRecord record;

		Kept(SpikeRecord record) {
			this.record = record;
		}

	}

	/** A spike, on its stream's event loop: handed over, never looked into here. */
	private void submit(Spike spike, StreamTimer self) {
		this.spiked.add(self);
		if (this.keepFinal) {
			this.outstanding.computeIfAbsent(self, (t) -> new Outstanding()).added();
		}
		this.handedOver.incrementAndGet();
		if (this.handOff.offer(spike, self)) {
			return;
		}
		if (this.handOff.isClosed()) {
			settled(self, null);
			return;
		}
		this.unscanned.incrementAndGet();
		if (!this.unscannedLogged) {
			this.unscannedLogged = true;
			logger.warn("More than " + HAND_OFF_CAPACITY + " spikes waiting for the look at the other streams;"
					+ " the spikes beyond are counted and kept with the cause unknown (logged once)");
		}
		schedule(() -> unattributed(spike, self), 0, self);
	}

	/**
	 * On the scan thread: what the other streams received during each gap; then each
	 * spike is judged at its tick, with the others of the batch due at the same one.
	 */
	private void scan(List<SpikeHandOff.Handed> batch) {
		List<PeerStreams.Gap> gaps = new ArrayList<>(batch.size());
		for (SpikeHandOff.Handed handed : batch) {
			Spike spike = handed.spike();
			gaps.add(new PeerStreams.Gap(handed.self(), spike.previousArrivalNanos(), spike.arrivalNanos()));
		}
		List<PeerView> views = this.peers.during(gaps);
		// Spikes come in about the order their gaps closed: those due at one tick are
		// next to each other.
		long now = this.clock.nanoTime();
		List<Judgement> due = new ArrayList<>();
		long dueTick = 0;
		for (int i = 0; i < batch.size(); i++) {
			Spike spike = batch.get(i).spike();
			StreamTimer self = batch.get(i).self();
			long tick = tick(spike.arrivalNanos() + this.delayNanos);
			if (!due.isEmpty() && tick != dueTick) {
				judgeLater(due, dueTick - now);
				due = new ArrayList<>();
			}
			dueTick = tick;
			if (reserve(self)) {
				PeerView peers = views.get(i);
				due.add(new Judgement(self, () -> attribute(spike, peers)));
			}
		}
		judgeLater(due, dueTick - now);
	}

	/** The first tick of the judging grid at or after a time. */
	private long tick(long nanos) {
		long since = nanos - this.tickOrigin;
		return this.tickOrigin + Math.floorDiv(since + JUDGE_TICK_NANOS - 1, JUDGE_TICK_NANOS) * JUDGE_TICK_NANOS;
	}

	/** A spike's judgement, waiting for its tick, and the stream it is of. */
	private record Judgement(StreamTimer self, Runnable judge) {

	}

	private void schedule(Runnable judge, long delayNanos, StreamTimer self) {
		if (reserve(self)) {
			judgeLater(List.of(new Judgement(self, judge)), delayNanos);
		}
	}

	/**
	 * Whether one more spike may wait for its judgement; one over {@link #MAX_PENDING} is
	 * dropped, its stream told it is settled.
	 */
	private boolean reserve(StreamTimer self) {
		if (this.pending.incrementAndGet() <= MAX_PENDING) {
			return true;
		}
		this.pending.decrementAndGet();
		settled(self, null);
		if (!this.dropLogged) {
			this.dropLogged = true;
			logger.warn("More than " + MAX_PENDING + " spikes awaiting attribution; dropping (logged once)");
		}
		return false;
	}

	/**
	 * Runs reserved judgements in one task on the attribution thread, in order; each
	 * releases its reservation and catches its own failure.
	 */
	private void judgeLater(List<Judgement> judgements, long delayNanos) {
		if (judgements.isEmpty()) {
			return;
		}
		try {
			this.executor.schedule(() -> {
				for (Judgement judgement : judgements) {
					judgement.judge().run();
				}
			}, Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
			this.judgeTasks.incrementAndGet();
		}
		catch (RejectedExecutionException ex) {
			for (Judgement judgement : judgements) {
				this.pending.decrementAndGet();
				settled(judgement.self(), null);
			}
		}
	}

	/** A spike the full hand-off refused, kept and counted as unknown. */
	private void unattributed(Spike spike, StreamTimer timer) {
		this.pending.decrementAndGet();
		boolean handed = false;
		try {
			SpikeRecord record = SpikeRecord.unattributed(spike);
			Kept kept = keep(record);
			log(record, record.evidence());
			handed = true;
			judged(timer, new Judged(spike, record, kept));
		}
		catch (RuntimeException ex) {
			logger.warn("Keeping an unattributed spike failed; streams are unaffected", ex);
			if (!handed) {
				settled(timer, null);
			}
		}
	}

	/**
	 * Keeps each stream's final spike records for {@link #whenSpikesFinal}; set before
	 * the first request.
	 */
	public void keepFinalSpikes() {
		this.keepFinal = true;
	}

	/**
	 * Hands a stream's spike records over once they are all final (judged, and corrected
	 * by the engine's own figures when it reported them): at once, on the caller's
	 * thread, for a stream without spikes or whose spikes are final; else later, on the
	 * attribution thread. Only with {@link #keepFinalSpikes}; call once per stream, after
	 * it ended.
	 * @param timer the stream's timer
	 * @param action told the records, oldest first
	 */
	public void whenSpikesFinal(StreamTimer timer, Consumer<List<SpikeRecord>> action) {
		Outstanding spikes = this.outstanding.get(timer);
		if (spikes == null) {
			action.accept(List.of());
			return;
		}
		List<SpikeRecord> ready = spikes.whenFinal(action);
		if (ready != null) {
			this.outstanding.remove(timer);
			action.accept(ready);
		}
	}

	private void settled(StreamTimer timer, SpikeRecord record) {
		Outstanding spikes = (timer != null) ? this.outstanding.get(timer) : null;
		if (spikes == null) {
			return;
		}
		Consumer<List<SpikeRecord>> action = spikes.settled(record);
		if (action != null) {
			this.outstanding.remove(timer);
			try {
				action.accept(spikes.records());
			}
			catch (RuntimeException ex) {
				logger.warn("Handing over a stream's final spikes failed; streams are unaffected", ex);
			}
		}
	}

	/** A stream's spikes on their way to final. */
	private static final class Outstanding {

		private final List<SpikeRecord> records = new ArrayList<>(2);

		private int count;

		private Consumer<List<SpikeRecord>> action;

		synchronized void added() {
			this.count++;
		}

		/** Returns the action to tell once this was the last one, else null. */
		synchronized Consumer<List<SpikeRecord>> settled(SpikeRecord record) {
			if (record != null) {
				this.records.add(record);
			}
			this.count--;
			return (this.count == 0) ? this.action : null;
		}

		/** Returns the records when all are final, else keeps the action for later. */
		synchronized List<SpikeRecord> whenFinal(Consumer<List<SpikeRecord>> action) {
			if (this.count > 0) {
				this.action = action;
				return null;
			}
			return records();
		}

		synchronized List<SpikeRecord> records() {
			return List.copyOf(this.records);
		}

	}

	private void attribute(Spike spike, PeerView peers) {
		this.pending.decrementAndGet();
		boolean handed = false;
		try {
			// A scrape or two may fail under load;
			// older samples no longer describe the gap.
			long stale = 4 * this.intervalNanos;
			// Behind a pool the samples come from whichever engine answered: they
			// describe none.
			EngineSample[] window = (this.history.engines() > 1) ? NO_SAMPLES : this.history
				.window(spike.previousArrivalNanos() - this.intervalNanos, spike.arrivalNanos() + this.intervalNanos);
			// Two events of one engine step reach tokengap a little apart.
			long[] resumed = peers.resumedAtEnd(spike.arrivalNanos(),
					Math.min(spike.upstreamGapNanos() / 4, PeerView.RESUME_TOLERANCE_NANOS));
			Evidence evidence = Evidence.of(spike, window, stale,
					this.firstTokens.between(spike.previousArrivalNanos(),
							spike.arrivalNanos() + Math.min(spike.upstreamGapNanos() / 4, 50_000_000L)),
					this.firstTokens::between, peers, resumed, heldBack(spike, peers.self()), pace(spike, peers.self()),
					prefillRate());
			CauseRules.Verdict verdict = CauseRules.verdict(spike, evidence, this.properties);
			SpikeRecord record = SpikeRecord.of(spike, verdict, evidence);
			Kept kept = keep(record);
			log(record, evidence);
			handed = true;
			judged(peers.self(), new Judged(spike, record, kept));
		}
		catch (RuntimeException ex) {
			logger.warn("Attributing a spike failed; streams are unaffected", ex);
			if (!handed) {
				settled(peers.self(), null);
			}
		}
	}

	/** A spike's record waits for its stream's end, to be counted then. */
	private void judged(StreamTimer timer, Judged judged) {
		if (timer == null || (timer.isEnded() && !this.closing.containsKey(timer))) {
			finish(timer, List.of(judged), -1);
			return;
		}
		this.open.computeIfAbsent(timer, (t) -> new ArrayList<>(2)).add(judged);
		if (this.open.size() > MAX_OPEN_STREAMS) {
			Map.Entry<StreamTimer, List<Judged>> oldest = this.open.entrySet().iterator().next();
			this.open.remove(oldest.getKey());
			Long end = this.closing.remove(oldest.getKey());
			finish(oldest.getKey(), oldest.getValue(), (end != null) ? end : -1);
		}
	}

	/**
	 * This stream's events (per choice) that arrived within half an engine step after the
	 * gap closed, the step being the stream's pace before the gap ({@link #pace}); read
	 * when the spike is judged, by when they have arrived. 0 when the stream had too few
	 * events before the gap to know its pace.
	 */
	static int heldBack(Spike spike, StreamTimer timer) {
		if (timer == null) {
			return 0;
		}
		long[] arrivals = new long[StreamTimer.RECENT_ARRIVALS];
		int n = timer.recentArrivals(arrivals);
		int firstBefore = firstBefore(spike, arrivals, n);
		long step = pace(timer, arrivals, n, firstBefore);
		if (step <= 0) {
			return 0;
		}
		int count = 0;
		for (int i = 0; i < firstBefore; i++) {
			if (arrivals[i] > spike.arrivalNanos() && arrivals[i] <= spike.arrivalNanos() + step / 2) {
				count++;
			}
		}
		return count / Math.max(1, timer.choices());
	}

	/**
	 * The stream's own engine step before the gap: the median interval of its last few
	 * events before it times its choices; 0 when it had too few events.
	 */
	static long pace(Spike spike, StreamTimer timer) {
		if (timer == null) {
			return 0;
		}
		long[] arrivals = new long[StreamTimer.RECENT_ARRIVALS];
		int n = timer.recentArrivals(arrivals);
		return pace(timer, arrivals, n, firstBefore(spike, arrivals, n));
	}

	private static int firstBefore(Spike spike, long[] arrivals, int n) {
		int firstBefore = 0;
		while (firstBefore < n && arrivals[firstBefore] > spike.previousArrivalNanos()) {
			firstBefore++;
		}
		return firstBefore;
	}

	/**
	 * The median of the intervals between events one step apart (as many events apart as
	 * the stream has choices), not the mean: one earlier spike among the events would
	 * otherwise be taken for the pace.
	 */
	private static long pace(StreamTimer timer, long[] arrivals, int n, int firstBefore) {
		int before = Math.min(PACE_EVENTS, n - firstBefore);
		int choices = Math.max(1, timer.choices());
		if (before < 3 || before <= choices) {
			return 0;
		}
		long[] steps = new long[before - choices];
		for (int i = 0; i < steps.length; i++) {
			steps[i] = arrivals[firstBefore + i] - arrivals[firstBefore + i + choices];
		}
		Arrays.sort(steps);
		return steps[steps.length / 2];
	}

	/**
	 * A stream with spikes ended: they are closed once the scrapes after its end are in,
	 * which say how often the engine preempted the request ({@link FinishedPreemptions}).
	 */
	private void ended(StreamTimer timer) {
		if (!this.spiked.remove(timer)) {
			return;
		}
		long now = this.clock.nanoTime();
		long end = Math.max(now, timer.lastArrivalNanos());
		long close = tick(end + this.delayNanos) + JUDGE_TICK_NANOS;
		this.closing.put(timer, end);
		try {
			this.executor.schedule(() -> {
				this.closing.remove(timer);
				List<Judged> judged = this.open.remove(timer);
				if (judged != null) {
					finish(timer, judged, end);
				}
			}, close - now, TimeUnit.NANOSECONDS);
			this.handedOver.incrementAndGet();
		}
		catch (RejectedExecutionException ex) {
			this.closing.remove(timer);
		}
	}

	/**
	 * A stream's judged spikes are final: corrected by the engine's own figures when it
	 * reported them, then counted.
	 */
	private void finish(StreamTimer timer, List<Judged> judged, long endNanos) {
		try {
			EngineReport report = (timer != null) ? timer.engineReport() : null;
			String says = "the engine says";
			if (timer != null && endNanos >= 0 && (report == null || !report.hasPreemptions())) {
				long preemptions = preemptionsAtEnd(timer, endNanos);
				if (preemptions != FinishedPreemptions.UNKNOWN) {
					report = EngineReport.withPreemptions(report, preemptions);
					says = "the engine's per-request preemption histogram says";
				}
			}
			List<SpikeRecord> records = (report != null)
					? EngineReportRules.correct(judged, timer, report, this.properties, says) : null;
			for (int i = 0; i < judged.size(); i++) {
				SpikeRecord before = judged.get(i).record();
				SpikeRecord after = ((records != null) ? records.get(i) : before).placed(length(timer, before));
				replace(judged.get(i).kept(), after);
				if (after != before) {
					if (!after.cause().equals(before.cause()) && logger.isInfoEnabled()
							&& this.logLimiter.tryAcquire() >= 0) {
						logger.info("spike corrected request_id=" + after.requestId() + " token=" + after.tokenIndex()
								+ " cause=" + after.cause() + " was=" + before.cause() + " summary=" + after.summary());
					}
				}
				this.meters.recordSpike(after.model(), after.cause(), after.position(),
						judged.get(i).spike().gapNanos() / 1e9, after.traceId());
				settled(timer, after);
			}
		}
		catch (RuntimeException ex) {
			logger.warn("Closing a stream's spikes failed; streams are unaffected", ex);
		}
	}

	/**
	 * The stream's length in content events of the spike's choice: all it had when it
	 * ended (or when it was closed early, over {@link #MAX_OPEN_STREAMS}); at least up to
	 * the spike's own event.
	 */
	private static int length(StreamTimer timer, SpikeRecord record) {
		int seen = (timer != null) ? timer.contentEvents(record.choice()) : 0;
		return Math.max(seen, record.tokenIndex() + 1);
	}

	/**
	 * The request's preemptions from the engine's per-request histogram across its end,
	 * from a scrape before its last content event (less a scrape interval, for the time
	 * its last output took to reach tokengap) to one after the stream ended.
	 */
	private long preemptionsAtEnd(StreamTimer timer, long endNanos) {
		long last = timer.lastArrivalNanos();
		if (last < 0 || this.history.engines() > 1) {
			return FinishedPreemptions.UNKNOWN;
		}
		long finishedAfter = last - this.intervalNanos;
		return FinishedPreemptions.of(this.history.window(finishedAfter, endNanos), finishedAfter, endNanos);
	}

	private void log(SpikeRecord record, Evidence evidence) {
		if (!logger.isInfoEnabled()) {
			return;
		}
		long skipped = this.logLimiter.tryAcquire();
		if (skipped < 0) {
			return;
		}
		logger.info(
				"spike request_id=" + record.requestId() + " model=" + record.model() + " endpoint=" + record.endpoint()
						+ " choice=" + record.choice() + " token=" + record.tokenIndex() + " gap_ms=" + record.gapMs()
						+ " upstream_gap_ms=" + record.upstreamGapMs() + " write_delay_ms=" + record.writeDelayMs()
						+ " socket_wait_ms=" + record.socketWaitMs() + " cause=" + record.cause() + " scope="
						+ record.scope() + " causes=" + String.join(",", record.causes()) + " evidence=" + evidence
						+ ((skipped > 0)
								? " (" + skipped + " earlier spikes not logged: over "
										+ this.properties.logLinesPerSecond() + " lines/s; all are counted and kept)"
								: ""));
	}

	/**
	 * The engine's learned prefill rate, read again only when a new engine sample came:
	 * it reads the whole history, and spikes come in bursts between two scrapes. On the
	 * attribution thread only.
	 */
	private Double prefillRate() {
		// Read before the history: a sample appended meanwhile is read again next time.
		long appended = this.history.appendedCount();
		if (appended != this.prefillRateAt) {
			this.prefillRate = PrefillRate.learned(this.history, this.properties.prefillTokens());
			this.prefillRateAt = appended;
			this.prefillRateReads.incrementAndGet();
		}
		return this.prefillRate;
	}

	/**
	 * @return how often the prefill rate was learned from the whole history so far
	 */
	long prefillRateReads() {
		return this.prefillRateReads.get();
	}

	/** Corrects a record in place, if it is still among the last ones. */
	private void replace(Kept kept, SpikeRecord after) {
		synchronized (this.records) {
			kept.record = after;
		}
	}

	private Kept keep(SpikeRecord record) {
		Kept kept = new Kept(record);
		synchronized (this.records) {
			this.records.addFirst(kept);
			while (this.records.size() > this.properties.history()) {
				this.records.removeLast();
			}
		}
		return kept;
	}

	/**
	 * @return the kept spike records, newest first
	 */
	public List<SpikeRecord> records() {
		synchronized (this.records) {
			List<SpikeRecord> records = new ArrayList<>(this.records.size());
			for (Kept kept : this.records) {
				records.add(kept.record);
			}
			return records;
		}
	}

	/**
	 * @return the spikes and stream ends the event loops handed over so far
	 */
	long tasksHandedOver() {
		return this.handedOver.get();
	}

	/**
	 * @return the tasks that judged spikes so far (one per tick of a scan batch, one per
	 * spike the full hand-off refused)
	 */
	long judgeTasks() {
		return this.judgeTasks.get();
	}

	/**
	 * @return the spikes the full hand-off refused so far (kept as unknown)
	 */
	long spikesNotScanned() {
		return this.unscanned.get();
	}

	/**
	 * @return the spikes waiting for the scan thread
	 */
	int spikesAwaitingScan() {
		return this.handOff.waiting();
	}

	@Override
	public void close() {
		this.handOff.close();
		this.executor.shutdownNow();
	}

}
