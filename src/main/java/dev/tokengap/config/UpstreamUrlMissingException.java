package dev.tokengap.config;

/**
 * The proxy was started without {@code tokengap.upstream.url} and without asking for the
 * demo: it refuses to start rather than serve the simulator's made-up completions to real
 * clients.
 */
class UpstreamUrlMissingException extends IllegalStateException {

	static final String ACTION = "Set tokengap.upstream.url (environment variable TOKENGAP_UPSTREAM_URL) to the "
			+ "engine, e.g. http://127.0.0.1:8000, or pass --tokengap.mode=demo to run against the built-in "
			+ "vLLM simulator on purpose.";

	UpstreamUrlMissingException() {
		super("tokengap.upstream.url (TOKENGAP_UPSTREAM_URL) is not set and tokengap.mode is not demo: "
				+ "refusing to start. " + ACTION);
	}

}
