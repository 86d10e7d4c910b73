package dev.tokengap.metrics;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Info;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import dev.tokengap.timing.GapObserver;
import dev.tokengap.timing.LogRateLimiter;
import dev.tokengap.timing.NanoClock;

/**
 * The catalogue of every client-visible series tokengap exports: names, help, labels and
 * bucket edges, as {@code metrics-contract.md} defines them. Dashboards and alert rules
 * use exactly these names.
 *
 * <p>
 * Series are registered directly with the Prometheus client so that names, labels and
 * {@code le} edges are exactly the contract's (no {@code _max} side series, no unit
 * rewriting). Data points are resolved once per (model, endpoint) pair and cached, so
 * recording an event is a single {@code observe(double)} on a pre-built data point.
 */
public final class TokengapMeters {

	public static final String TIME_TO_FIRST_TOKEN = "tokengap_time_to_first_token_seconds";

	public static final String TIME_TO_FIRST_BYTE = "tokengap_time_to_first_byte_seconds";

	public static final String INTER_TOKEN_LATENCY = "tokengap_inter_token_latency_seconds";

	public static final String TIME_PER_OUTPUT_TOKEN = "tokengap_time_per_output_token_seconds";

	public static final String E2E_REQUEST_LATENCY = "tokengap_e2e_request_latency_seconds";

	public static final String STREAM_MAX_GAP = "tokengap_stream_max_gap_seconds";

	public static final String STREAM_P99_GAP = "tokengap_stream_p99_gap_seconds";

	public static final String STREAM_JITTER_RATIO = "tokengap_stream_jitter_ratio";

	public static final String PROXY_WRITE_DELAY = "tokengap_proxy_write_delay_seconds";

	public static final String TTFT_OUTSIDE_ENGINE = "tokengap_ttft_outside_engine_seconds";

	public static final String ENGINE_QUEUE_TIME = "tokengap_engine_queue_time_seconds";

	public static final String STALLS = "tokengap_stalls_total";

	public static final String STALLED_STREAMS = "tokengap_stalled_streams";

	public static final String STREAMS = "tokengap_streams_total";

	public static final String SMOOTH_STREAMS = "tokengap_smooth_streams_total";

	public static final String INFLIGHT_STREAMS = "tokengap_inflight_streams";

	public static final String REQUESTS = "tokengap_requests_total";

	public static final String GAP_SPIKE = "tokengap_gap_spike_seconds";

	public static final String RECORDING_ERRORS = "tokengap_recording_errors_total";

	public static final String BUILD_INFO = "tokengap_build_info";

	static final String MODEL_NAME = "model_name";

	static final String ENDPOINT = "endpoint";

	/** Streams need this many gaps before their p99 gap and jitter ratio are recorded. */
	public static final int PER_STREAM_MIN_GAPS = 10;

	/** Recording failures logged per second at most; all are counted. */
	private static final int FAILURE_LOG_LINES_PER_SECOND = 1;

	private static final Log logger = LogFactory.getLog(TokengapMeters.class);

	private final LoopHistogram ttft;

	private final LoopHistogram ttfb;

	private final LoopHistogram itl;

	private final LoopHistogram tpot;

	private final LoopHistogram e2e;

	private final LoopHistogram maxGap;

	private final LoopHistogram jitter;

	private final LoopHistogram p99Gap;

	private final Counter recordingErrors;

	private final LogRateLimiter failureLog;

	private final LoopHistogram writeDelay;

	private final LoopHistogram outsideEngine;

	private final LoopHistogram engineQueue;

	private final Counter stalls;

	private final Counter smooth;

	private final Counter streams;

	private final Counter requests;

	private final LoopHistogram spikes;

	private volatile GapObserver gapObserver = GapObserver.NONE;

	private volatile GenAiMeters genAi;

	private final BucketEdges edges;

	private final long stallNanos;

	private final NanoClock clock;

	private final Map<String, StreamMeters[]> byModel = new ConcurrentHashMap<>();

	/**
	 * Registers every series with the given registry.
	 * @param registry the registry {@code /actuator/prometheus} exposes
	 * @param edges the bucket edges in use
	 * @param stallNanos the stall threshold
	 * @param clock the clock (for live stall sampling)
	 */
	public TokengapMeters(PrometheusRegistry registry, BucketEdges edges, long stallNanos, NanoClock clock) {
		this.edges = edges;
		this.stallNanos = stallNanos;
		this.clock = clock;
		this.ttft = histogram(registry, TIME_TO_FIRST_TOKEN,
				"Request received by tokengap to first content-bearing event written to the client", edges.ttft());
		this.ttfb = histogram(registry, TIME_TO_FIRST_BYTE,
				"Request received by tokengap to first response body byte written to the client", edges.ttft());
		this.itl = histogram(registry, INTER_TOKEN_LATENCY,
				"Time between consecutive content-bearing events written to the client", edges.itl());
		this.tpot = histogram(registry, TIME_PER_OUTPUT_TOKEN,
				"(last content write - first content write) / (output tokens - 1), per completed stream", edges.itl());
		this.e2e = histogram(registry, E2E_REQUEST_LATENCY,
				"Request received by tokengap to last byte written to the client", edges.request());
		this.maxGap = histogram(registry, STREAM_MAX_GAP, "Worst gap of each completed stream", edges.itl());
		this.p99Gap = histogram(registry, STREAM_P99_GAP,
				"p99 gap (nearest-rank) of each completed stream with at least " + PER_STREAM_MIN_GAPS + " gaps",
				edges.itl());
		this.jitter = histogram(registry, STREAM_JITTER_RATIO,
				"p99 gap / p50 gap of each completed stream with at least " + PER_STREAM_MIN_GAPS + " gaps",
				BucketEdges.JITTER);
		this.writeDelay = histogram(registry, PROXY_WRITE_DELAY,
				"Client write time minus upstream arrival time of each content event", BucketEdges.WRITE_DELAY);
		this.outsideEngine = histogram(registry, TTFT_OUTSIDE_ENGINE,
				"Client-visible TTFT minus the engine's queue time and its TTFT from scheduling, per completed stream "
						+ "whose engine reported its per-request metrics",
				edges.ttft());
		this.engineQueue = histogram(registry, ENGINE_QUEUE_TIME,
				"The engine's own queue time of each completed stream whose engine reported its per-request metrics",
				edges.ttft());
		this.stalls = counter(registry, STALLS, "Gaps at or above the stall threshold", MODEL_NAME, ENDPOINT);
		this.smooth = counter(registry, SMOOTH_STREAMS,
				"Completed streams with a content event and no gap at or above the stall threshold", MODEL_NAME,
				ENDPOINT);
		this.streams = counter(registry, STREAMS, "Requests that asked to stream, once ended, by outcome", MODEL_NAME,
				ENDPOINT, "outcome");
		this.recordingErrors = counter(registry, RECORDING_ERRORS,
				"Recordings that failed (a bug): measuring never stops silently");
		this.failureLog = new LogRateLimiter(FAILURE_LOG_LINES_PER_SECOND, clock);
		this.requests = counter(registry, REQUESTS, "Proxied requests, by HTTP status sent to the client", MODEL_NAME,
				ENDPOINT, "status");
		this.spikes = LoopHistogram.register(registry, GAP_SPIKE,
				"Gap spikes by attributed cause and position in the stream; _sum is the time lost per cause",
				edges.itl(), MODEL_NAME, "cause", "position");
		GaugeWithCallback.builder()
			.name(INFLIGHT_STREAMS)
			.help("Streamed requests in flight")
			.labelNames(MODEL_NAME, ENDPOINT)
			.callback((callback) -> forEach((m) -> callback.call(m.inflight(), m.model(), m.endpoint().label())))
			.register(registry);
		GaugeWithCallback.builder()
			.name(STALLED_STREAMS)
			.help("Streams in flight whose last content event was written more than the stall threshold ago")
			.labelNames(MODEL_NAME, ENDPOINT)
			.callback((callback) -> {
				long now = this.clock.nanoTime();
				forEach((m) -> callback.call(m.stalled(now), m.model(), m.endpoint().label()));
			})
			.register(registry);
	}

	private static LoopHistogram histogram(PrometheusRegistry registry, String name, String help, double[] edges) {
		return LoopHistogram.register(registry, name, help, edges, MODEL_NAME, ENDPOINT);
	}

	private static Counter counter(PrometheusRegistry registry, String name, String help, String... labels) {
		return Counter.builder().name(name).help(help).labelNames(labels).withoutExemplars().register(registry);
	}

	private void forEach(Consumer<StreamMeters> action) {
		for (StreamMeters[] perEndpoint : this.byModel.values()) {
			for (StreamMeters m : perEndpoint) {
				if (m != null) {
					action.accept(m);
				}
			}
		}
	}

	/**
	 * Returns the data points of one (model, endpoint) pair, creating them on first use.
	 * @param model the bounded model label
	 * @param endpoint the endpoint
	 * @return the meters
	 */
	public StreamMeters meters(String model, Endpoint endpoint) {
		StreamMeters[] perEndpoint = this.byModel.computeIfAbsent(model,
				(k) -> new StreamMeters[Endpoint.values().length]);
		StreamMeters m = perEndpoint[endpoint.ordinal()];
		if (m == null) {
			synchronized (perEndpoint) {
				m = perEndpoint[endpoint.ordinal()];
				if (m == null) {
					m = new StreamMeters(this, model, endpoint);
					perEndpoint[endpoint.ordinal()] = m;
				}
			}
		}
		return m;
	}

	/**
	 * Counts a request by the status sent to the client.
	 * @param model the bounded model label
	 * @param endpoint the endpoint
	 * @param status the HTTP status
	 */
	public void countRequest(String model, Endpoint endpoint, int status) {
		// StreamMeters keeps these series by status; this is the lookup it falls back to
		this.requests.labelValues(model, endpoint.label(), Integer.toString(status)).inc();
	}

	/**
	 * Exports {@code tokengap_build_info}: which build runs, with which bucket profile.
	 * @param registry the registry
	 * @param version the build's version
	 * @param bucketProfile the profile in use
	 */
	public static void registerBuildInfo(PrometheusRegistry registry, String version, String bucketProfile) {
		Info.builder()
			.name(BUILD_INFO)
			.help("The tokengap build and the bucket profile in use")
			.labelNames("version", "bucket_profile")
			.register(registry)
			.addLabelValues(version, bucketProfile);
	}

	/**
	 * Counts a recording that failed and logs it, at most once a second; the stream it
	 * belongs to is unaffected.
	 * @param failure what failed
	 */
	public void recordingFailed(RuntimeException failure) {
		try {
			this.recordingErrors.inc();
			long skipped = this.failureLog.tryAcquire();
			if (skipped >= 0) {
				logger.warn("Recording a metric failed; the stream is unaffected (counted in " + RECORDING_ERRORS
						+ ((skipped > 0) ? "; " + skipped + " more since the last line" : "") + ")", failure);
			}
		}
		catch (RuntimeException ex) {
			// the counter itself failed: nothing left to tell it to
		}
	}

	/**
	 * Records one attributed gap spike; its trace id may become its bucket's exemplar.
	 * @param model the bounded model label
	 * @param cause the cause label
	 * @param position where it sits in its stream ({@code head}, {@code middle},
	 * {@code tail})
	 * @param seconds the gap
	 * @param traceId the stream's trace id, or null
	 */
	public void recordSpike(String model, String cause, String position, double seconds, String traceId) {
		this.spikes.labelValues(model, cause, position).observe(seconds, this.clock.nanoTime(), traceId);
	}

	/**
	 * Sets who is told about every gap (spike attribution).
	 * @param observer the observer
	 */
	public void gapObserver(GapObserver observer) {
		this.gapObserver = observer;
	}

	GapObserver gapObserver() {
		return this.gapObserver;
	}

	/**
	 * Also records every observation under OpenTelemetry's GenAI names; set before the
	 * first request (the instruments are bound with each model and endpoint's meters).
	 * @param genAi the GenAI catalogue, or null for none (the default)
	 */
	public void genAi(GenAiMeters genAi) {
		this.genAi = genAi;
	}

	GenAiMeters genAi() {
		return this.genAi;
	}

	public BucketEdges edges() {
		return this.edges;
	}

	public long stallNanos() {
		return this.stallNanos;
	}

	LoopHistogram ttft() {
		return this.ttft;
	}

	LoopHistogram ttfb() {
		return this.ttfb;
	}

	LoopHistogram itl() {
		return this.itl;
	}

	LoopHistogram tpot() {
		return this.tpot;
	}

	LoopHistogram e2e() {
		return this.e2e;
	}

	LoopHistogram maxGap() {
		return this.maxGap;
	}

	LoopHistogram jitter() {
		return this.jitter;
	}

	LoopHistogram p99Gap() {
		return this.p99Gap;
	}

	LoopHistogram writeDelay() {
		return this.writeDelay;
	}

	LoopHistogram outsideEngine() {
		return this.outsideEngine;
	}

	LoopHistogram engineQueue() {
		return this.engineQueue;
	}

	Counter stalls() {
		return this.stalls;
	}

	Counter smooth() {
		return this.smooth;
	}

	Counter streams() {
		return this.streams;
	}

	Counter requests() {
		return this.requests;
	}

}
