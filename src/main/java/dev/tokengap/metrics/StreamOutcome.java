package dev.tokengap.metrics;

/**
 * How a streamed response ended: the {@code outcome} label of {@code tokengap_streams_total}.
 */
public enum StreamOutcome {

	/** The upstream finished the stream and every byte reached the client. */
	COMPLETED("completed"),
	/** The client went away first; the upstream request was cancelled. */
	CLIENT_CANCELLED("client_cancelled"),
	/** The upstream connection failed mid-stream. */
	UPSTREAM_ERROR("upstream_error"),
	/** The upstream went silent longer than the idle timeout. */
	UPSTREAM_TIMEOUT("upstream_timeout");

	private final String label;

	StreamOutcome(String label) {
		this.label = label;
	}

	public String label() {
		return this.label;
	}

}
