package dev.tokengap.proxy;

import java.time.Duration;

/**
 * The client sent a request's headers and then stopped short of the end of its body for
 * {@code tokengap.proxy.request-timeout} ({@link RequestTimeoutHandler}). The client's
 * fault, answered 408.
 */
class RequestBodyTimeoutException extends RuntimeException {

	RequestBodyTimeoutException(Duration timeout) {
		super("The client sent no more of its request body within " + timeout + " (tokengap.proxy.request-timeout)");
	}

}
