package dev.tokengap.proxy;

/**
 * The request body's chunked framing broke part-way (see {@link StrictRequestHandler});
 * Reactor Netty has already answered 400 and is closing the connection.
 */
class RequestBodyDecodingException extends RuntimeException {

	RequestBodyDecodingException() {
		super("The request body could not be decoded; nothing was forwarded");
	}

}
