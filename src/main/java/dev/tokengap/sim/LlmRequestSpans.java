package dev.tokengap.sim;

import java.net.URI;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;

/**
 * The engine's own trace of each request, as vLLM exports it with
 * {@code --otlp-traces-endpoint}: one {@code llm_request} server span per finished
 * request, child of the request's {@code traceparent}, from its arrival to its last
 * token, with vLLM's {@code gen_ai.latency.*} and usage attributes (names from vLLM's
 * {@code vllm/tracing.py}, {@code SpanAttributes}; values in seconds, as vLLM's). Spans
 * go out over OTLP/HTTP from a bounded queue in the background; a collector that is down
 * costs only the spans.
 */
final class LlmRequestSpans implements AutoCloseable {

	/** The span name vLLM gives each request. */
	static final String NAME = "llm_request";

	static final String SERVICE_NAME = "vllm-simulator";

	static final AttributeKey<String> RESPONSE_MODEL = AttributeKey.stringKey("gen_ai.response.model");

	static final AttributeKey<String> REQUEST_ID = AttributeKey.stringKey("gen_ai.request.id");

	static final AttributeKey<Long> REQUEST_MAX_TOKENS = AttributeKey.longKey("gen_ai.request.max_tokens");

	static final AttributeKey<Long> REQUEST_N = AttributeKey.longKey("gen_ai.request.n");

	static final AttributeKey<Long> PROMPT_TOKENS = AttributeKey.longKey("gen_ai.usage.prompt_tokens");

	static final AttributeKey<Long> COMPLETION_TOKENS = AttributeKey.longKey("gen_ai.usage.completion_tokens");

	static final AttributeKey<Double> TIME_IN_QUEUE = AttributeKey.doubleKey("gen_ai.latency.time_in_queue");

	static final AttributeKey<Double> TIME_TO_FIRST_TOKEN = AttributeKey
		.doubleKey("gen_ai.latency.time_to_first_token");

	static final AttributeKey<Double> E2E = AttributeKey.doubleKey("gen_ai.latency.e2e");

	static final AttributeKey<Double> TIME_IN_MODEL_PREFILL = AttributeKey
		.doubleKey("gen_ai.latency.time_in_model_prefill");

	static final AttributeKey<Double> TIME_IN_MODEL_DECODE = AttributeKey
		.doubleKey("gen_ai.latency.time_in_model_decode");

	static final AttributeKey<Double> TIME_IN_MODEL_INFERENCE = AttributeKey
		.doubleKey("gen_ai.latency.time_in_model_inference");

	/** No endpoint: nothing is traced. */
	static final LlmRequestSpans NONE = new LlmRequestSpans(null);

	private static final TextMapGetter<String> TRACEPARENT = new TextMapGetter<>() {

		@Override
		public Iterable<String> keys(String carrier) {
			return java.util.List.of("traceparent");
		}

		@Override
		public String get(String carrier, String key) {
			return "traceparent".equals(key) ? carrier : null;
		}

	};

	private final SdkTracerProvider provider;

	private final Tracer tracer;

	private LlmRequestSpans(SdkTracerProvider provider) {
		this.provider = provider;
		this.tracer = (provider != null) ? provider.get("dev.tokengap.sim") : null;
	}

	/**
	 * Spans exported to an OTLP/HTTP traces endpoint.
	 * @param endpoint the endpoint ({@code http://collector:4318/v1/traces}), or null for
	 * none
	 * @return the span exporter
	 */
	static LlmRequestSpans of(URI endpoint) {
		if (endpoint == null) {
			return NONE;
		}
		OtlpHttpSpanExporter exporter = OtlpHttpSpanExporter.builder()
			.setEndpoint(endpoint.toString())
			.setTimeout(Duration.ofSeconds(5))
			.build();
		SdkTracerProvider provider = SdkTracerProvider.builder()
			.setResource(Resource.getDefault()
				.merge(Resource.create(Attributes.of(AttributeKey.stringKey("service.name"), SERVICE_NAME))))
			.addSpanProcessor(BatchSpanProcessor.builder(exporter).setScheduleDelay(Duration.ofSeconds(1)).build())
			.build();
		return new LlmRequestSpans(provider);
	}

	boolean enabled() {
		return this.tracer != null;
	}

	/**
	 * The parent a request's span gets: its {@code traceparent}, or none (a new trace).
	 * @param traceparent the header's value, or null
	 * @return the parent context
	 */
	Context parent(String traceparent) {
		if (!enabled() || traceparent == null) {
			return Context.root();
		}
		return W3CTraceContextPropagator.getInstance().extract(Context.root(), traceparent, TRACEPARENT);
	}

	/**
	 * Exports the span of one finished sequence; its times are the engine's own.
	 * @param parent the request's parent context
	 * @param requestId the sequence's request id
	 * @param call the request
	 * @param timings the sequence's engine timestamps
	 * @param model the served model
	 */
	void finished(Context parent, String requestId, CompletionRequest call, RequestTimings timings, String model) {
		if (!enabled()) {
			return;
		}
		// The engine's timestamps are nanoTime readings; spans take the epoch.
		long epochOffset = System.currentTimeMillis() * 1_000_000L - System.nanoTime();
		Attributes attributes = Attributes.builder()
			.put(RESPONSE_MODEL, model)
			.put(REQUEST_ID, requestId)
			.put(REQUEST_MAX_TOKENS, call.maxTokens())
			.put(REQUEST_N, call.n())
			.put(PROMPT_TOKENS, call.promptTokens())
			.put(COMPLETION_TOKENS, timings.generatedTokens())
			.put(TIME_IN_QUEUE, seconds(timings.firstScheduledNanos() - timings.arrivalNanos()))
			.put(TIME_TO_FIRST_TOKEN, seconds(timings.firstTokenNanos() - timings.arrivalNanos()))
			.put(E2E, seconds(timings.lastTokenNanos() - timings.arrivalNanos()))
			.put(TIME_IN_MODEL_PREFILL, seconds(timings.firstTokenNanos() - timings.firstScheduledNanos()))
			.put(TIME_IN_MODEL_DECODE, seconds(timings.lastTokenNanos() - timings.firstTokenNanos()))
			.put(TIME_IN_MODEL_INFERENCE, seconds(timings.lastTokenNanos() - timings.firstScheduledNanos()))
			.build();
		this.tracer.spanBuilder(NAME)
			.setParent(parent)
			.setSpanKind(SpanKind.SERVER)
			.setStartTimestamp(epochOffset + timings.arrivalNanos(), TimeUnit.NANOSECONDS)
			.setAllAttributes(attributes)
			.startSpan()
			.end(epochOffset + timings.lastTokenNanos(), TimeUnit.NANOSECONDS);
	}

	private static double seconds(long nanos) {
		return Math.max(0, nanos) / 1e9;
	}

	/** Exports what is queued (a few seconds at most), then stops. */
	@Override
	public void close() {
		if (this.provider != null) {
			this.provider.shutdown().join(5, TimeUnit.SECONDS);
		}
	}

}
