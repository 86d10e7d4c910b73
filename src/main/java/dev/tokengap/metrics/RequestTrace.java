package dev.tokengap.metrics;

/**
 * tokengap's part of one request's trace: the ids its records carry and the trace context
 * it sends to the engine.
 * <p>
 * Made by a {@link RequestTracer} when the request arrives; its exchange's recorder keeps
 * it and calls {@link #ended} once, when the exchange has its outcome.
 */
public interface RequestTrace {

	/**
	 * @return the trace id, 32 lower-case hex digits: the client's, or a new one
	 */
	String traceId();

	/**
	 * @return tokengap's span id, 16 lower-case hex digits: the parent id the engine
	 * receives
	 */
	String spanId();

	/**
	 * @return whether the trace is sampled (the flag the engine receives)
	 */
	boolean sampled();

	/**
	 * @return the {@code traceparent} value to send to the engine
	 */
	String traceparent();

	/**
	 * @return the {@code tracestate} value to send to the engine, or null to send none
	 */
	String tracestate();

	/**
	 * Called once when the exchange has its outcome, after its meters were recorded; a
	 * failure here is counted as a recording error and breaks nothing.
	 * @param exchange what the exchange recorded (its labels, status, outcome and stream
	 * timer)
	 */
	default void ended(ExchangeRecorder exchange) {
	}

}
