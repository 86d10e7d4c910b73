package dev.tokengap.metrics;

/**
 * How a streamed request ended: the {@code outcome} label of
 * {@code tokengap_streams_total}. Each streamed request gets exactly one; the rules that
 * pick it are here, so that every call site asks the same question the same way. Adding
 * an outcome is one constant here: every per-outcome table is sized from
 * {@link #values()}.
 */
public enum StreamOutcome {

	/**
	 * The stream reached its good end with at least one content event and no in-band
	 * failure.
	 */
	COMPLETED("completed"),
	/**
	 * The engine answered 200 but the stream carried an in-band failure, or ended without
	 * its good end or without any content event (vLLM drops errors raised before the
	 * first token).
	 */
	ENGINE_ERROR("engine_error"),
	/**
	 * The engine refused before streaming: 429 or a 5xx (an admission limit), or
	 * tokengap's 503.
	 */
	REJECTED("rejected"),
	/**
	 * A 4xx other than 429, from the engine or from tokengap (413, 400) to a request
	 * known to stream.
	 */
	INVALID("invalid"),
	/** The engine could not be reached (502), or its connection failed mid-stream. */
	UPSTREAM_ERROR("upstream_error"),
	/** No response headers in time (504), or an idle gap longer than the idle timeout. */
	UPSTREAM_TIMEOUT("upstream_timeout"),
	/** The client went away, or stopped reading for longer than the send timeout. */
	CLIENT_CANCELLED("client_cancelled");

	private final String label;

	StreamOutcome(String label) {
		this.label = label;
	}

	public String label() {
		return this.label;
	}

	/**
	 * The outcome of a stream whose body the engine ended cleanly.
	 * @param failed whether an in-band failure event was seen
	 * @param reachedEnd whether the stream's good end was seen ({@code [DONE]},
	 * {@code response.completed}, {@code message_stop})
	 * @param contentEvents content-bearing events written to the client
	 * @return {@link #COMPLETED} or {@link #ENGINE_ERROR}
	 */
	public static StreamOutcome ofBody(boolean failed, boolean reachedEnd, int contentEvents) {
		return (!failed && reachedEnd && contentEvents > 0) ? COMPLETED : ENGINE_ERROR;
	}

	/**
	 * The outcome an engine's status decides by itself, before any body.
	 * @param status the engine's HTTP status
	 * @return {@link #REJECTED} for 429 and 5xx, {@link #INVALID} for other 4xx, null
	 * when the body decides
	 */
	public static StreamOutcome ofEngineStatus(int status) {
		if (status == 429 || status >= 500) {
			return REJECTED;
		}
		return (status >= 400) ? INVALID : null;
	}

	/**
	 * The outcome of an answer tokengap made itself instead of the engine's.
	 * @param status the status tokengap sent
	 * @return the outcome
	 */
	public static StreamOutcome ofProxyAnswer(int status) {
		return switch (status) {
			case 502 -> UPSTREAM_ERROR;
			case 504 -> UPSTREAM_TIMEOUT;
			case 429, 503 -> REJECTED;
			default -> (status >= 400 && status < 500) ? INVALID : UPSTREAM_ERROR;
		};
	}

}
