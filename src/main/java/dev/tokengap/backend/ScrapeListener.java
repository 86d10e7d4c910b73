package dev.tokengap.backend;

/**
 * Receives the outcome of every scrape, e.g. to drive {@code tokengap_backend_up},
 * {@code tokengap_backend_scrape_duration_seconds} and
 * {@code tokengap_backend_scrape_errors_total}. Called on an event loop or timer thread:
 * must be quick and never block.
 */
public interface ScrapeListener {

	/** A listener that ignores everything. */
	ScrapeListener NONE = new ScrapeListener() {

		@Override
		public void scraped(EngineSample sample, long durationNanos) {
		}

		@Override
		public void failed(String reason, long durationNanos) {
		}

	};

	/**
	 * A scrape succeeded; the sample is already in the history.
	 * @param sample the engine's state
	 * @param durationNanos time from the request's start to the sample
	 */
	void scraped(EngineSample sample, long durationNanos);

	/**
	 * A scrape failed; the next one is tried at the next interval.
	 * @param reason what went wrong, for logs (not a bounded tag value)
	 * @param durationNanos time from the request's start to the failure
	 */
	void failed(String reason, long durationNanos);

}
