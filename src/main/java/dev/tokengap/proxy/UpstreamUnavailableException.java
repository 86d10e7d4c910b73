package dev.tokengap.proxy;

/**
 * The upstream could not be reached, or closed the connection before its response
 * headers.
 */
class UpstreamUnavailableException extends RuntimeException {

	UpstreamUnavailableException(String message, Throwable cause) {
		super(message, cause);
	}

}
