package dev.tokengap.metrics;

import java.util.Arrays;

/**
 * The {@code endpoint} label: which OpenAI-compatible API a request used. Adding an
 * endpoint is one constant here: every per-endpoint table is sized from
 * {@link #values()}.
 */
public enum Endpoint {

	CHAT_COMPLETIONS("chat_completions", "/v1/chat/completions"),

	COMPLETIONS("completions", "/v1/completions"),

	RESPONSES("responses", "/v1/responses"),

	MESSAGES("messages", "/v1/messages"),

	TRANSCRIPTIONS("transcriptions", "/v1/audio/transcriptions"),

	TRANSLATIONS("translations", "/v1/audio/translations"),

	OTHER("other", null);

	/**
	 * The endpoints with a path, in declaration order (a longer path before one it ends
	 * with).
	 */
	private static final Endpoint[] KNOWN = Arrays.stream(values())
		.filter((endpoint) -> endpoint.pathSuffix != null)
		.toArray(Endpoint[]::new);

	private final String label;

	private final String pathSuffix;

	Endpoint(String label, String pathSuffix) {
		this.label = label;
		this.pathSuffix = pathSuffix;
	}

	public String label() {
		return this.label;
	}

	/**
	 * Classifies a request path; never returns the path itself, so raw paths never reach
	 * a label. A path under an endpoint ({@code /v1/responses/resp_1}, a stored response)
	 * is {@link #OTHER}.
	 * @param path the request path without query
	 * @return the endpoint
	 */
	public static Endpoint of(String path) {
		for (Endpoint endpoint : KNOWN) {
			if (path.endsWith(endpoint.pathSuffix)) {
				return endpoint;
			}
		}
		return OTHER;
	}

}
