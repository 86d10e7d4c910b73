package dev.tokengap.tracing;

import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.common.AttributesBuilder;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.StatusCode;

import dev.tokengap.attribution.SpikeAttributor;
import dev.tokengap.attribution.SpikeRecord;
import dev.tokengap.metrics.ExchangeRecorder;
import dev.tokengap.metrics.GenAiMeters;
import dev.tokengap.metrics.ModelLabels;
import dev.tokengap.metrics.RequestTrace;
import dev.tokengap.metrics.StreamOutcome;
import dev.tokengap.metrics.TokengapMeters;
import dev.tokengap.timing.StreamTimer;

/**
 * One request's span: started when the request arrives, named
 * {@code {gen_ai.operation.name} {gen_ai.request.model}} and given what the exchange
 * measured when it ends, and ended once the stream's spikes are final, with one event per
 * spike. Carries no prompt or completion text: only labels, times and counts.
 *
 * <p>
 * What the exchange measured is read on the thread that ends it (often its event loop: a
 * dozen primitive reads); the attributes are set and the span ended there for a stream
 * without spikes, and on the attribution thread for one with spikes, once they are final.
 * The SDK's batch processor exports it in the background.
 */
final class RequestSpan implements RequestTrace {

	/** The name until the request is understood. */
	static final String UNNAMED = "request";

	static final String SPIKE_EVENT = "tokengap.spike";

	static final AttributeKey<String> OPERATION = AttributeKey.stringKey(GenAiMeters.OPERATION_NAME);

	static final AttributeKey<String> PROVIDER = AttributeKey.stringKey(GenAiMeters.PROVIDER_NAME);

	static final AttributeKey<String> MODEL = AttributeKey.stringKey(GenAiMeters.REQUEST_MODEL);

	static final AttributeKey<String> ERROR_TYPE = AttributeKey.stringKey(GenAiMeters.ERROR_TYPE);

	static final AttributeKey<Boolean> STREAM = AttributeKey.booleanKey("gen_ai.request.stream");

	static final AttributeKey<Double> TIME_TO_FIRST_CHUNK = AttributeKey
		.doubleKey("gen_ai.response.time_to_first_chunk");

	static final AttributeKey<Long> OUTPUT_TOKENS = AttributeKey.longKey("gen_ai.usage.output_tokens");

	static final AttributeKey<Long> STATUS_CODE = AttributeKey.longKey("http.response.status_code");

	static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("tokengap.outcome");

	static final AttributeKey<Long> CONTENT_EVENTS = AttributeKey.longKey("tokengap.stream.content_events");

	static final AttributeKey<Double> MAX_GAP = AttributeKey.doubleKey("tokengap.stream.max_gap");

	static final AttributeKey<Double> P99_GAP = AttributeKey.doubleKey("tokengap.stream.p99_gap");

	static final AttributeKey<Long> STALLS = AttributeKey.longKey("tokengap.stream.stalls");

	static final AttributeKey<Long> SPIKE_TOKEN_INDEX = AttributeKey.longKey("tokengap.spike.token_index");

	static final AttributeKey<Long> SPIKE_CHOICE = AttributeKey.longKey("tokengap.spike.choice");

	static final AttributeKey<Double> SPIKE_GAP = AttributeKey.doubleKey("tokengap.spike.gap");

	static final AttributeKey<String> SPIKE_CAUSE = AttributeKey.stringKey("tokengap.spike.cause");

	static final AttributeKey<String> SPIKE_SCOPE = AttributeKey.stringKey("tokengap.spike.scope");

	private final Span span;

	private final String traceparent;

	private final String tracestate;

	private final SpikeAttributor spikes;

	RequestSpan(Span span, String tracestate, SpikeAttributor spikes) {
		this.span = span;
		SpanContext context = span.getSpanContext();
		this.traceparent = "00-" + context.getTraceId() + "-" + context.getSpanId() + "-"
				+ context.getTraceFlags().asHex();
		this.tracestate = tracestate;
		this.spikes = spikes;
	}

	@Override
	public String traceId() {
		return this.span.getSpanContext().getTraceId();
	}

	@Override
	public String spanId() {
		return this.span.getSpanContext().getSpanId();
	}

	@Override
	public boolean sampled() {
		return this.span.getSpanContext().isSampled();
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
	public void ended(ExchangeRecorder exchange) {
		if (!this.span.isRecording()) {
			return;
		}
		Summary summary = Summary.of(exchange);
		if (this.spikes == null || !exchange.live()) {
			finish(summary, List.of(), -1);
			return;
		}
		Instant now = Instant.now();
		long endEpochNanos = TimeUnit.SECONDS.toNanos(now.getEpochSecond()) + now.getNano();
		this.spikes.whenSpikesFinal(exchange.timer(), (records) -> finish(summary, records, endEpochNanos));
	}

	/**
	 * Names the span, sets what the exchange measured, adds an event per spike and ends
	 * it.
	 * @param endEpochNanos when the exchange ended, or -1 for now
	 */
	private void finish(Summary summary, List<SpikeRecord> records, long endEpochNanos) {
		this.span.updateName(summary.name());
		this.span.setAllAttributes(summary.attributes());
		if (summary.errorType() != null) {
			this.span.setStatus(StatusCode.ERROR, summary.errorType());
		}
		for (SpikeRecord record : records) {
			this.span.addEvent(SPIKE_EVENT,
					Attributes.of(SPIKE_TOKEN_INDEX, (long) record.tokenIndex(), SPIKE_CHOICE, (long) record.choice(),
							SPIKE_GAP, record.gapMs() / 1e3, SPIKE_CAUSE, record.cause(), SPIKE_SCOPE, record.scope()),
					record.time());
		}
		if (endEpochNanos < 0) {
			this.span.end();
		}
		else {
			this.span.end(endEpochNanos, TimeUnit.NANOSECONDS);
		}
	}

	@Override
	public String toString() {
		return this.traceparent;
	}

	/**
	 * What one exchange measured, read when it ended.
	 *
	 * @param operation the GenAI operation name, or null for an endpoint without one
	 * @param endpoint the endpoint label
	 * @param model the bounded model label
	 * @param streamed whether the client asked for a stream (or got one)
	 * @param status the status sent, or -1 when none was
	 * @param outcome the stream's outcome, or null for a request that was not streamed
	 * @param contentEvents content events written
	 * @param ttftSeconds time to the first content event, or NaN without one
	 * @param outputTokens output tokens of all choices
	 * @param maxGapSeconds the worst gap, or NaN without a gap
	 * @param p99GapSeconds the p99 gap, or NaN with fewer gaps than the meters need
	 * @param stalls gaps at or above the stall threshold
	 */
	record Summary(String operation, String endpoint, String model, boolean streamed, int status, StreamOutcome outcome,
			int contentEvents, double ttftSeconds, long outputTokens, double maxGapSeconds, double p99GapSeconds,
			int stalls) {

		static Summary of(ExchangeRecorder exchange) {
			StreamTimer timer = exchange.timer();
			int gaps = timer.gapCount();
			long tokens = 0;
			for (int choice = 0; choice < timer.choices(); choice++) {
				tokens += timer.outputTokens(choice);
			}
			StreamOutcome outcome = exchange.streamOutcome();
			return new Summary(GenAiMeters.operation(exchange.endpoint()), exchange.endpoint().label(),
					exchange.model(), outcome != null, exchange.status(), outcome, timer.contentEvents(),
					(timer.contentEvents() > 0) ? timer.timeToFirstTokenNanos() / 1e9 : Double.NaN, tokens,
					(gaps >= 1) ? timer.maxGapNanos() / 1e9 : Double.NaN,
					(gaps >= TokengapMeters.PER_STREAM_MIN_GAPS) ? timer.gapPercentileNanos(0.99) / 1e9 : Double.NaN,
					timer.stalls());
		}

		/**
		 * {@code {gen_ai.operation.name} {gen_ai.request.model}}, as the conventions say.
		 */
		String name() {
			String operation = (this.operation != null) ? this.operation : this.endpoint;
			return ModelLabels.UNKNOWN.equals(this.model) ? operation : operation + " " + this.model;
		}

		/** The outcome of a failed stream, a request's error status, else null. */
		String errorType() {
			if (this.outcome != null) {
				return (this.outcome == StreamOutcome.COMPLETED) ? null : this.outcome.label();
			}
			if (this.status < 0) {
				return Integer.toString(ExchangeRecorder.CLIENT_CLOSED);
			}
			return (this.status >= 400) ? Integer.toString(this.status) : null;
		}

		Attributes attributes() {
			AttributesBuilder attributes = Attributes.builder()
				.put(PROVIDER, GenAiMeters.PROVIDER)
				.put(MODEL, this.model)
				.put(STREAM, this.streamed);
			if (this.operation != null) {
				attributes.put(OPERATION, this.operation);
			}
			if (this.status >= 0) {
				attributes.put(STATUS_CODE, this.status);
			}
			if (this.outcome != null) {
				attributes.put(OUTCOME, this.outcome.label())
					.put(CONTENT_EVENTS, this.contentEvents)
					.put(STALLS, this.stalls);
			}
			putIfKnown(attributes, TIME_TO_FIRST_CHUNK, this.ttftSeconds);
			putIfKnown(attributes, MAX_GAP, this.maxGapSeconds);
			putIfKnown(attributes, P99_GAP, this.p99GapSeconds);
			if (this.outputTokens > 0) {
				attributes.put(OUTPUT_TOKENS, this.outputTokens);
			}
			String error = errorType();
			if (error != null) {
				attributes.put(ERROR_TYPE, error);
			}
			return attributes.build();
		}

		private static void putIfKnown(AttributesBuilder attributes, AttributeKey<Double> key, double value) {
			if (!Double.isNaN(value)) {
				attributes.put(key, value);
			}
		}

	}

}
