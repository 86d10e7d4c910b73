package dev.tokengap.metrics;

/**
 * Starts tokengap's part of each request's trace, from the W3C trace context the client
 * sent (if any).
 * <p>
 * Called on the client connection's event loop once per request, before its body is read:
 * it must not block.
 */
public interface RequestTracer {

	/**
	 * Starts the trace of a request.
	 * @param traceparent the client's {@code traceparent} header, or null; an invalid one
	 * counts as none (a new trace), and never fails the request
	 * @param tracestate the client's {@code tracestate} header (its lines joined with
	 * commas), or null
	 * @return the request's trace
	 */
	RequestTrace start(String traceparent, String tracestate);

}
