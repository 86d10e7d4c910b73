package dev.tokengap.metrics;

/**
 * The {@code endpoint} label: which OpenAI-compatible API a request used.
 */
public enum Endpoint {

	CHAT_COMPLETIONS("chat_completions"), COMPLETIONS("completions"), OTHER("other");

	private final String label;

	Endpoint(String label) {
		this.label = label;
	}

	public String label() {
		return this.label;
	}

	/**
	 * Classifies a request path; never returns the path itself, so raw paths never reach a label.
	 * @param path the request path without query
	 * @return the endpoint
	 */
	public static Endpoint of(String path) {
		if (path.endsWith("/v1/chat/completions")) {
			return CHAT_COMPLETIONS;
		}
		if (path.endsWith("/v1/completions")) {
			return COMPLETIONS;
		}
		return OTHER;
	}

}
