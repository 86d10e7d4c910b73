package dev.tokengap.proxy;

/**
 * Every pooled engine connection stayed busy for
 * {@code tokengap.upstream.pending-acquire-timeout}: tokengap's own limit,
 * {@code tokengap.upstream.max-connections}, refused the request.
 */
class UpstreamSaturatedException extends RuntimeException {

	UpstreamSaturatedException(String message, Throwable cause) {
		super(message, cause);
	}

}
