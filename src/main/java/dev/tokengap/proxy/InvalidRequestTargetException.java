package dev.tokengap.proxy;

/**
 * The request target is neither a path nor an absolute URL ({@code CONNECT host:port},
 * {@code OPTIONS *}, {@code GET x}): appended to the engine's URL it could name another
 * host or port, so it is answered 400 and never forwarded.
 */
class InvalidRequestTargetException extends RuntimeException {

	InvalidRequestTargetException() {
		super("The request target must be a path starting with '/': tokengap forwards only to its engine");
	}

}
