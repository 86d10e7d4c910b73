package dev.tokengap.metrics;

import java.util.concurrent.ThreadLocalRandom;

/**
 * Trace context without a tracing library: a request keeps the client's trace id (and its
 * sampled flag and {@code tracestate}), or gets a new random one sampled at the set
 * ratio; either way the engine's parent id is a new random span id of tokengap's.
 * <p>
 * Per request it makes the header's value and the trace object; the ids are cut from the
 * value when asked for.
 */
public final class W3cRequestTracer implements RequestTracer {

	private final double sampleRatio;

	/**
	 * Creates the tracer.
	 * @param sampleRatio the share of new traces marked sampled, from 0 to 1
	 */
	public W3cRequestTracer(double sampleRatio) {
		if (!(sampleRatio >= 0 && sampleRatio <= 1)) {
			throw new IllegalArgumentException("a sample ratio is from 0 to 1: " + sampleRatio);
		}
		this.sampleRatio = sampleRatio;
	}

	@Override
	public RequestTrace start(String traceparent, String tracestate) {
		String given = TraceParent.trim(traceparent);
		if (TraceParent.isValid(given)) {
			return new Trace(TraceParent.generate(given, TraceParent.sampled(given)), tracestate);
		}
		// no parent: a tracestate without one belongs to no trace
		return new Trace(TraceParent.generate(null, sample()), null);
	}

	private boolean sample() {
		return this.sampleRatio >= 1
				|| (this.sampleRatio > 0 && ThreadLocalRandom.current().nextDouble() < this.sampleRatio);
	}

	private static final class Trace implements RequestTrace {

		private final String traceparent;

		private final String tracestate;

		private String traceId;

		private String spanId;

		Trace(String traceparent, String tracestate) {
			this.traceparent = traceparent;
			this.tracestate = tracestate;
		}

		@Override
		public String traceId() {
			String id = this.traceId;
			if (id == null) {
				id = this.traceparent.substring(3, 35);
				this.traceId = id;
			}
			return id;
		}

		@Override
		public String spanId() {
			String id = this.spanId;
			if (id == null) {
				id = this.traceparent.substring(36, 52);
				this.spanId = id;
			}
			return id;
		}

		@Override
		public boolean sampled() {
			return this.traceparent.charAt(54) == '1';
		}

		@Override
		public String traceparent() {
			return this.traceparent;
		}

		@Override
		public String tracestate() {
			return this.tracestate;
		}

		@Override
		public String toString() {
			return this.traceparent;
		}

	}

}
