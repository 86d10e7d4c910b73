package dev.tokengap.proxy;

/**
 * The upstream sent no response headers within
 * {@code tokengap.upstream.response-timeout}.
 */
class UpstreamTimeoutException extends RuntimeException {

	UpstreamTimeoutException(String message) {
		super(message);
	}

}
