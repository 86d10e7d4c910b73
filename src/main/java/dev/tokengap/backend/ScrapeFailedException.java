package dev.tokengap.backend;

/**
 * A scrape failed for a reason of ours (status, size, content) rather than the network's.
 * Its message is the reason reported; no stack trace is taken, as a failing engine fails
 * every tick.
 */
final class ScrapeFailedException extends RuntimeException {

	ScrapeFailedException(String message) {
		super(message, null, false, false);
	}

	ScrapeFailedException(String message, Throwable cause) {
		super(message, cause, false, false);
	}

}
