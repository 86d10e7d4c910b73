package dev.tokengap.proxy;

/**
 * The request body exceeds {@code tokengap.proxy.max-request-body}.
 */
class RequestBodyTooLargeException extends RuntimeException {

	RequestBodyTooLargeException(long limit) {
		super("Request body exceeds the limit of " + limit + " bytes (tokengap.proxy.max-request-body)");
	}

}
