package dev.tokengap.metrics;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReferenceArray;

import io.prometheus.metrics.core.datapoints.CounterDataPoint;
import io.prometheus.metrics.core.datapoints.DistributionDataPoint;

import dev.tokengap.timing.StreamTimer;

/**
 * The pre-resolved data points of one (model, endpoint) pair, and the streams of that
 * pair now in flight. Built once, so the per-event path does no label lookup.
 */
public final class StreamMeters {

	private final String model;

	private final Endpoint endpoint;

	final LoopHistogram.Series ttft;

	final DistributionDataPoint ttfb;

	final LoopHistogram.Series itl;

	final DistributionDataPoint tpot;

	final DistributionDataPoint e2e;

	final LoopHistogram.Series maxGap;

	final DistributionDataPoint jitter;

	final DistributionDataPoint p99Gap;

	final DistributionDataPoint writeDelay;

	final DistributionDataPoint outsideEngine;

	final DistributionDataPoint engineQueue;

	final CounterDataPoint stalls;

	final CounterDataPoint smooth;

	/**
	 * The same observations under OpenTelemetry's GenAI names, or null when not exported.
	 */
	final GenAiMeters.Series genAi;

	private final CounterDataPoint[] outcomes = new CounterDataPoint[StreamOutcome.values().length];

	private final Set<StreamTimer> live = ConcurrentHashMap.newKeySet();

	private final TokengapMeters catalogue;

	/**
	 * {@code tokengap_requests_total}'s series of this model and endpoint, by status
	 * (three digits), looked up once each: a request then counts without a label lookup.
	 */
	private final AtomicReferenceArray<CounterDataPoint> requests = new AtomicReferenceArray<>(1000);

	StreamMeters(TokengapMeters catalogue, String model, Endpoint endpoint) {
		this.catalogue = catalogue;
		this.model = model;
		this.endpoint = endpoint;
		String e = endpoint.label();
		this.ttft = catalogue.ttft().labelValues(model, e);
		this.ttfb = catalogue.ttfb().labelValues(model, e);
		this.itl = catalogue.itl().labelValues(model, e);
		this.tpot = catalogue.tpot().labelValues(model, e);
		this.e2e = catalogue.e2e().labelValues(model, e);
		this.maxGap = catalogue.maxGap().labelValues(model, e);
		this.jitter = catalogue.jitter().labelValues(model, e);
		this.p99Gap = catalogue.p99Gap().labelValues(model, e);
		this.writeDelay = catalogue.writeDelay().labelValues(model, e);
		this.outsideEngine = catalogue.outsideEngine().labelValues(model, e);
		this.engineQueue = catalogue.engineQueue().labelValues(model, e);
		this.stalls = catalogue.stalls().labelValues(model, e);
		this.smooth = catalogue.smooth().labelValues(model, e);
		GenAiMeters genAi = catalogue.genAi();
		this.genAi = (genAi != null) ? genAi.series(model, endpoint) : null;
		for (StreamOutcome outcome : StreamOutcome.values()) {
			this.outcomes[outcome.ordinal()] = catalogue.streams().labelValues(model, e, outcome.label());
		}
	}

	public String model() {
		return this.model;
	}

	public Endpoint endpoint() {
		return this.endpoint;
	}

	/**
	 * Counts a request by the status sent to the client.
	 * @param status the HTTP status
	 */
	void countRequest(int status) {
		if (status < 0 || status >= this.requests.length()) {
			this.catalogue.countRequest(this.model, this.endpoint, status);
			return;
		}
		CounterDataPoint series = this.requests.get(status);
		if (series == null) {
			series = this.catalogue.requests().labelValues(this.model, this.endpoint.label(), Integer.toString(status));
			this.requests.set(status, series);
		}
		series.inc();
	}

	CounterDataPoint outcome(StreamOutcome outcome) {
		return this.outcomes[outcome.ordinal()];
	}

	void started(StreamTimer timer) {
		this.live.add(timer);
	}

	void ended(StreamTimer timer) {
		this.live.remove(timer);
	}

	int inflight() {
		return this.live.size();
	}

	int stalled(long nowNanos) {
		int n = 0;
		for (StreamTimer timer : this.live) {
			if (timer.stalledAt(nowNanos)) {
				n++;
			}
		}
		return n;
	}

}
