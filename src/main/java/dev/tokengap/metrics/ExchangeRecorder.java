package dev.tokengap.metrics;

import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;

import dev.tokengap.timing.ContentWrite;
import dev.tokengap.timing.EngineReport;
import dev.tokengap.timing.GapObserver;
import dev.tokengap.timing.StreamTimer;

/**
 * Records one proxied exchange: its first byte, each content event of a stream, and how
 * it ended.
 *
 * <p>
 * How it ended is recorded in one place, {@link #close}, called once from the exchange's
 * single exit whatever ended it (completion, error or cancel). Until then the call sites
 * only say what they know: the status sent ({@link #responded}), the outcome they saw
 * ({@link #outcome}, the first one said wins) and that the whole response was written
 * ({@link #completed}). What nobody said is decided at the exit: a cancelled exchange is
 * {@code client_cancelled}, any other unexplained end {@code upstream_error}. So a stream
 * always leaves the live set and is counted exactly once, however its pieces raced.
 *
 * <p>
 * Called from the client connection's event loop, except {@link #outcome} and
 * {@link #close} (any thread). Every method catches recording failures and counts them in
 * {@code tokengap_recording_errors_total}: metrics never break the data path.
 */
public final class ExchangeRecorder {

	/**
	 * nginx's status for "client closed the request before the response": counted, never
	 * sent.
	 */
	public static final int CLIENT_CLOSED = 499;

	private static final AtomicReferenceFieldUpdater<ExchangeRecorder, StreamOutcome> OUTCOME = AtomicReferenceFieldUpdater
		.newUpdater(ExchangeRecorder.class, StreamOutcome.class, "said");

	private static final AtomicIntegerFieldUpdater<ExchangeRecorder> CLOSED = AtomicIntegerFieldUpdater
		.newUpdater(ExchangeRecorder.class, "closed");

	private final TokengapMeters catalogue;

	private final StreamTimer timer;

	private String model = ModelLabels.UNKNOWN;

	private Endpoint endpoint = Endpoint.OTHER;

	private StreamMeters meters;

	private String requestId = "";

	private long promptTokens;

	private boolean streamRequested;

	private boolean live;

	private RequestTrace trace;

	private volatile StreamOutcome outcome;

	private volatile int status = -1;

	private volatile long completedNanos = -1;

	private volatile StreamOutcome said;

	private volatile int closed;

	/**
	 * Starts recording an exchange whose request was received at {@code startNanos}.
	 * @param catalogue the meters
	 * @param startNanos when the request was received
	 */
	public ExchangeRecorder(TokengapMeters catalogue, long startNanos) {
		this.catalogue = catalogue;
		this.timer = new StreamTimer(startNanos, catalogue.stallNanos());
	}

	/**
	 * Sets the labels once the request is understood.
	 * @param modelLabel the bounded model label
	 * @param endpoint the endpoint
	 */
	public void route(String modelLabel, Endpoint endpoint) {
		this.model = modelLabel;
		this.endpoint = endpoint;
		this.meters = null;
	}

	/**
	 * Identifies the exchange for spike records.
	 * @param requestId the request id sent upstream
	 * @param promptTokens the estimated prompt size
	 */
	public void identify(String requestId, long promptTokens) {
		this.requestId = requestId;
		this.promptTokens = promptTokens;
	}

	/**
	 * Names the request's trace: its id goes on the stream's records, and the trace is
	 * told when the exchange ends.
	 * @param trace the request's trace
	 */
	public void trace(RequestTrace trace) {
		this.trace = trace;
		try {
			this.timer.traceId(trace.traceId());
		}
		catch (RuntimeException ex) {
			failed(ex);
		}
	}

	/**
	 * @return the request's trace, or null when none was named
	 */
	public RequestTrace trace() {
		return this.trace;
	}

	/**
	 * @return the bounded model label
	 */
	public String model() {
		return this.model;
	}

	/**
	 * @return the endpoint
	 */
	public Endpoint endpoint() {
		return this.endpoint;
	}

	/**
	 * @return the status sent to the client, or -1 when none was
	 */
	public int status() {
		return this.status;
	}

	/**
	 * @return whether the exchange was a live stream (timed by {@link #timer})
	 */
	public boolean live() {
		return this.live;
	}

	/**
	 * @return how the stream ended, once {@link #close} has decided it; null before, and
	 * for an exchange that was not a stream
	 */
	public StreamOutcome streamOutcome() {
		return this.outcome;
	}

	/**
	 * Marks this exchange as one the client asked to stream ({@code "stream": true}): it
	 * gets an outcome in {@code tokengap_streams_total} whatever is answered.
	 */
	public void streamRequested() {
		this.streamRequested = true;
	}

	/**
	 * Marks this exchange as a live stream (a {@code text/event-stream} answer to a
	 * generation request): it is timed, counted in flight until it ends, and gets an
	 * outcome.
	 */
	public void streamStarted() {
		try {
			this.live = true;
			meters().started(this.timer);
			this.catalogue.gapObserver().streamStarted(this.timer, this.requestId, this.promptTokens);
		}
		catch (RuntimeException ex) {
			failed(ex);
		}
	}

	/**
	 * Notes the status sent to the client (the engine's, or tokengap's own answer's).
	 * @param status the HTTP status
	 */
	public void responded(int status) {
		this.status = status;
	}

	/**
	 * Says how the exchange ended, as far as the caller knows; the first outcome said
	 * wins.
	 * @param outcome the outcome
	 */
	public void outcome(StreamOutcome outcome) {
		OUTCOME.compareAndSet(this, null, outcome);
	}

	/**
	 * Notes that the whole response was written.
	 * @param endNanos when its last byte was written
	 */
	public void completed(long endNanos) {
		this.completedNanos = endNanos;
	}

	/**
	 * Notes that body bytes reached the client.
	 * @param writeNanos when the write completed
	 */
	public void bodyWritten(long writeNanos) {
		try {
			if (this.timer.onBodyWritten(writeNanos)) {
				meters().ttfb.observe(this.timer.timeToFirstByteNanos() / 1e9);
			}
		}
		catch (RuntimeException ex) {
			failed(ex);
		}
	}

	/**
	 * Notes one content-bearing event of one choice that reached the client.
	 * @param choice the choice index (0 for shapes without choices)
	 * @param event the event's times (its arrival, its write's start and end, and how
	 * long earlier writes since the previous content event waited for the client's
	 * socket); read during this call only, so the caller may reuse it for its next event
	 */
	public void contentWritten(int choice, ContentWrite event) {
		if (this.closed != 0) {
			return;
		}
		try {
			StreamMeters m = meters();
			notifyObserver(choice, event);
			long gap = this.timer.onContent(choice, event.arrivalNanos(), event.writeNanos());
			GenAiMeters.Series genAi = m.genAi;
			long now = event.writeNanos();
			if (this.timer.contentEvents() == 1) {
				double ttft = this.timer.timeToFirstTokenNanos() / 1e9;
				m.ttft.observe(ttft, now, this.trace);
				if (genAi != null) {
					genAi.timeToFirstChunk.record(ttft);
				}
			}
			if (gap >= 0) {
				m.itl.observe(gap / 1e9, now, this.trace);
				if (genAi != null) {
					genAi.timePerOutputChunk.record(gap / 1e9);
				}
				if (gap >= this.catalogue.stallNanos()) {
					m.stalls.inc();
				}
			}
			m.writeDelay.observe(Math.max(0, event.writeNanos() - event.arrivalNanos()) / 1e9);
		}
		catch (RuntimeException ex) {
			failed(ex);
		}
	}

	private void notifyObserver(int choice, ContentWrite event) {
		GapObserver observer = this.catalogue.gapObserver();
		if (this.timer.contentEvents() == 0) {
			observer.firstContent(event, this.promptTokens);
		}
		else if (this.timer.contentEvents(choice) > 0) {
			observer.gap(this.timer, choice, this.requestId, this.model, this.endpoint.label(), event);
		}
	}

	/**
	 * Notes the engine's own figures for this stream (vLLM's per-request metrics),
	 * carried by an event that was just written to the client; only the first report
	 * counts (the timer keeps it).
	 * @param report what the engine said
	 */
	public void engineReported(EngineReport report) {
		if (this.closed != 0 || !this.live) {
			return;
		}
		try {
			// Kept on the timer: attribution reads it when it judges or closes the
			// stream's spikes.
			this.timer.engineReported(report);
		}
		catch (RuntimeException ex) {
			failed(ex);
		}
	}

	/**
	 * Notes an output token count an event carried.
	 * @param choice the choice it counts, or -1 for the whole stream
	 * @param tokens the cumulative count
	 */
	public void outputTokens(int choice, long tokens) {
		try {
			this.timer.onOutputTokens(choice, tokens);
		}
		catch (RuntimeException ex) {
			failed(ex);
		}
	}

	/**
	 * Records how the exchange ended: the request, and for a stream its outcome and
	 * summary. The exchange's single exit calls this; later calls are ignored.
	 * @param nowNanos the current time
	 * @param cancelled whether the exchange was cancelled (the client went away)
	 */
	public void close(long nowNanos, boolean cancelled) {
		if (!CLOSED.compareAndSet(this, 0, 1)) {
			return;
		}
		try {
			StreamMeters m = meters();
			int sent = this.status;
			m.countRequest((sent >= 0) ? sent : CLIENT_CLOSED);
			this.timer.end();
			boolean streamed = this.live || this.streamRequested;
			StreamOutcome outcome = streamed ? outcome(cancelled) : null;
			long end = this.completedNanos;
			if (end >= 0) {
				double e2e = Math.max(0, end - this.timer.startNanos()) / 1e9;
				m.e2e.observe(e2e);
				if (m.genAi != null) {
					(streamed ? m.genAi.stream(outcome) : m.genAi.request(sent)).record(e2e);
				}
			}
			if (this.live) {
				m.ended(this.timer);
				this.catalogue.gapObserver().streamEnded(this.timer);
			}
			if (streamed) {
				this.outcome = outcome;
				m.outcome(outcome).inc();
				if (outcome == StreamOutcome.COMPLETED) {
					recordCompletedStream(m, nowNanos);
				}
			}
		}
		catch (RuntimeException ex) {
			failed(ex);
		}
		traceEnded();
	}

	private void traceEnded() {
		RequestTrace ended = this.trace;
		if (ended == null) {
			return;
		}
		try {
			ended.ended(this);
		}
		catch (RuntimeException ex) {
			failed(ex);
		}
	}

	private StreamOutcome outcome(boolean cancelled) {
		StreamOutcome outcome = this.said;
		if (outcome != null) {
			return outcome;
		}
		return cancelled ? StreamOutcome.CLIENT_CANCELLED : StreamOutcome.UPSTREAM_ERROR;
	}

	private void recordCompletedStream(StreamMeters m, long nowNanos) {
		for (int choice = 0; choice < this.timer.choices(); choice++) {
			double tpot = this.timer.timePerOutputTokenSeconds(choice);
			if (!Double.isNaN(tpot)) {
				m.tpot.observe(tpot);
				if (m.genAi != null) {
					m.genAi.timePerOutputToken.record(tpot);
				}
			}
		}
		if (this.timer.gapCount() >= 1) {
			m.maxGap.observe(this.timer.maxGapNanos() / 1e9, nowNanos, this.trace);
		}
		if (this.timer.gapCount() >= TokengapMeters.PER_STREAM_MIN_GAPS) {
			m.p99Gap.observe(this.timer.gapPercentileNanos(0.99) / 1e9);
		}
		double jitter = this.timer.jitterRatio(TokengapMeters.PER_STREAM_MIN_GAPS);
		if (!Double.isNaN(jitter)) {
			m.jitter.observe(jitter);
		}
		if (this.timer.stalls() == 0 && this.timer.contentEvents() > 0) {
			m.smooth.inc();
		}
		recordOutsideEngine(m);
	}

	/**
	 * The client-visible TTFT minus what the engine says it spent before its first token:
	 * only when it said both figures (never a guess), and never below 0.
	 */
	private void recordOutsideEngine(StreamMeters m) {
		EngineReport report = this.timer.engineReport();
		if (report == null || this.timer.contentEvents() == 0 || !(report.queueMs() >= 0)
				|| !(report.firstTokenMs() >= 0)) {
			return;
		}
		double ttft = this.timer.timeToFirstTokenNanos() / 1e9;
		double engine = (report.queueMs() + report.firstTokenMs()) / 1e3;
		m.outsideEngine.observe(Math.max(0, ttft - engine));
		m.engineQueue.observe(report.queueMs() / 1e3);
	}

	/**
	 * @return the stream's timer (read-only use: attribution, tests)
	 */
	public StreamTimer timer() {
		return this.timer;
	}

	private StreamMeters meters() {
		StreamMeters m = this.meters;
		if (m == null) {
			m = this.catalogue.meters(this.model, this.endpoint);
			this.meters = m;
		}
		return m;
	}

	private void failed(RuntimeException ex) {
		this.catalogue.recordingFailed(ex);
	}

}
