package dev.tokengap.metrics;

import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import dev.tokengap.timing.GapObserver;
import dev.tokengap.timing.StreamTimer;

/**
 * Records one proxied exchange: its first byte, each content event of a stream, and how it ended.
 *
 * <p>
 * Called from the client connection's event loop. Every method swallows (and logs once) any
 * recording failure: metrics never break the data path.
 */
public final class ExchangeRecorder {

	private static final Log logger = LogFactory.getLog(ExchangeRecorder.class);

	private static final AtomicBoolean failureLogged = new AtomicBoolean();

	private final TokengapMeters catalogue;

	private final StreamTimer timer;

	private String model = ModelLabels.UNKNOWN;

	private Endpoint endpoint = Endpoint.OTHER;

	private StreamMeters meters;

	private String requestId = "";

	private long promptTokens;

	private long lastArrivalNanos = -1;

	private boolean streaming;

	private final AtomicBoolean finished = new AtomicBoolean();

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

	/** Marks this exchange as a stream: the response is {@code text/event-stream}. */
	public void streamStarted() {
		try {
			this.streaming = true;
			meters().started(this.timer);
		}
		catch (RuntimeException ex) {
			failed(ex);
		}
	}

	/**
	 * Marks this exchange as a stream the client asked for ({@code "stream": true}) whose response
	 * never began, so that {@link #finish} counts its outcome. Not a stream in flight: nothing is
	 * timed.
	 */
	public void streamRequested() {
		this.streaming = true;
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
	 * Notes one content-bearing event that reached the client.
	 * @param arrivalNanos when its last byte was read from upstream
	 * @param writeStartNanos when its write to the client started
	 * @param writeNanos when its write to the client completed
	 * @param earlierWaitNanos how long earlier writes since the previous content event waited for
	 * the client's socket (see {@link GapObserver#gap})
	 */
	public void contentWritten(long arrivalNanos, long writeStartNanos, long writeNanos, long earlierWaitNanos) {
		try {
			StreamMeters m = meters();
			notifyObserver(arrivalNanos, writeStartNanos, writeNanos, earlierWaitNanos);
			long gap = this.timer.onContent(writeNanos);
			if (gap < 0) {
				m.ttft.observe(this.timer.timeToFirstTokenNanos() / 1e9);
			}
			else {
				m.itl.observe(gap / 1e9);
				if (gap >= this.catalogue.stallNanos()) {
					m.stalls.inc();
				}
			}
			m.writeDelay.observe(Math.max(0, writeNanos - arrivalNanos) / 1e9);
		}
		catch (RuntimeException ex) {
			failed(ex);
		}
	}

	private void notifyObserver(long arrivalNanos, long writeStartNanos, long writeNanos, long earlierWaitNanos) {
		GapObserver observer = this.catalogue.gapObserver();
		if (this.timer.contentEvents() == 0) {
			observer.firstContent(arrivalNanos, writeNanos, this.promptTokens);
		}
		else {
			observer.gap(this.timer, this.requestId, this.model, this.endpoint.label(), this.lastArrivalNanos,
					arrivalNanos, writeStartNanos, writeNanos, earlierWaitNanos);
		}
		this.lastArrivalNanos = arrivalNanos;
	}

	/**
	 * Notes the {@code usage.completion_tokens} an event carried.
	 * @param tokens the cumulative count
	 */
	public void completionTokens(long tokens) {
		this.timer.onCompletionTokens(tokens);
	}

	/**
	 * Records how the exchange ended; later calls are ignored.
	 * @param status the HTTP status sent to the client
	 * @param outcome how a stream ended (ignored for non-streamed responses)
	 * @param endNanos when the last byte was written (or the exchange was abandoned)
	 */
	public void finish(int status, StreamOutcome outcome, long endNanos) {
		if (!this.finished.compareAndSet(false, true)) {
			return;
		}
		try {
			StreamMeters m = meters();
			this.catalogue.countRequest(this.model, this.endpoint, status);
			this.timer.end();
			if (outcome == StreamOutcome.COMPLETED) {
				m.e2e.observe((endNanos - this.timer.startNanos()) / 1e9);
			}
			if (this.streaming) {
				m.ended(this.timer);
				m.outcome(outcome).inc();
				if (outcome == StreamOutcome.COMPLETED) {
					recordCompletedStream(m);
				}
			}
		}
		catch (RuntimeException ex) {
			failed(ex);
		}
	}

	private void recordCompletedStream(StreamMeters m) {
		double tpot = this.timer.timePerOutputTokenSeconds();
		if (!Double.isNaN(tpot)) {
			m.tpot.observe(tpot);
		}
		if (this.timer.contentEvents() >= 2) {
			m.maxGap.observe(this.timer.maxGapNanos() / 1e9);
		}
		double jitter = this.timer.jitterRatio(TokengapMeters.JITTER_MIN_GAPS);
		if (!Double.isNaN(jitter)) {
			m.jitter.observe(jitter);
		}
		if (this.timer.stalls() == 0) {
			m.smooth.inc();
		}
	}

	/** @return the stream's timer (read-only use: attribution, tests) */
	public StreamTimer timer() {
		return this.timer;
	}

	public boolean streaming() {
		return this.streaming;
	}

	private StreamMeters meters() {
		StreamMeters m = this.meters;
		if (m == null) {
			m = this.catalogue.meters(this.model, this.endpoint);
			this.meters = m;
		}
		return m;
	}

	private static void failed(RuntimeException ex) {
		if (failureLogged.compareAndSet(false, true)) {
			logger.warn("Recording a metric failed; the stream is unaffected (logged once)", ex);
		}
	}

}
