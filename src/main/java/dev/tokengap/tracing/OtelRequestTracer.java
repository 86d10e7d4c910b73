package dev.tokengap.tracing;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;

import dev.tokengap.attribution.SpikeAttributor;
import dev.tokengap.metrics.RequestTrace;
import dev.tokengap.metrics.RequestTracer;

/**
 * The trace-context seam implemented with OpenTelemetry's SDK: each request gets a span
 * of its own whose id is the parent id the engine receives, continuing the client's trace
 * when its {@code traceparent} is valid (sampled as the client said), else a new trace
 * sampled by the SDK's sampler.
 *
 * <p>
 * On the event loop, per request: the span is started (ids and one object) and the
 * engine's header is written; what the span says is set when the exchange ends (see
 * {@link RequestSpan}).
 */
public final class OtelRequestTracer implements RequestTracer {

	private static final TextMapGetter<String[]> HEADERS = new TextMapGetter<>() {

		@Override
		public Iterable<String> keys(String[] carrier) {
			return java.util.List.of("traceparent", "tracestate");
		}

		@Override
		public String get(String[] carrier, String key) {
			return switch (key) {
				case "traceparent" -> carrier[0];
				case "tracestate" -> carrier[1];
				default -> null;
			};
		}

	};

	private final Tracer tracer;

	private final SpikeAttributor spikes;

	/**
	 * Creates the tracer.
	 * @param tracer OpenTelemetry's tracer (its provider samples and exports)
	 * @param spikes where each stream's final spikes come from, or null for no spike
	 * events
	 */
	public OtelRequestTracer(Tracer tracer, SpikeAttributor spikes) {
		this.tracer = tracer;
		this.spikes = spikes;
		if (spikes != null) {
			spikes.keepFinalSpikes();
		}
	}

	@Override
	public RequestTrace start(String traceparent, String tracestate) {
		Context parent = (traceparent != null) ? W3CTraceContextPropagator.getInstance()
			.extract(Context.root(), new String[] { traceparent.trim(), tracestate }, HEADERS) : Context.root();
		// An invalid traceparent counts as none: a new trace, and no tracestate.
		boolean continued = Span.fromContext(parent).getSpanContext().isValid();
		Span span = this.tracer.spanBuilder(RequestSpan.UNNAMED)
			.setParent(parent)
			.setSpanKind(SpanKind.SERVER)
			.startSpan();
		return new RequestSpan(span, continued ? tracestate : null, this.spikes);
	}

}
