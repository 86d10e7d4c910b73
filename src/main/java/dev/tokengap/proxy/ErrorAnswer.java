package dev.tokengap.proxy;

/**
 * The status and OpenAI error type tokengap answers a failure with, before the response
 * is committed: the one place failures are mapped.
 *
 * @param status the HTTP status
 * @param type the error type of the body
 */
record ErrorAnswer(int status, String type) {

	static ErrorAnswer of(Throwable error) {
		if (error instanceof RequestBodyTooLargeException) {
			return new ErrorAnswer(413, "RequestEntityTooLargeError");
		}
		if (error instanceof RequestBodyTimeoutException || isReactorNettyRequestTimeout(error)) {
			return new ErrorAnswer(408, "RequestTimeoutError");
		}
		if (error instanceof InvalidRequestTargetException) {
			return new ErrorAnswer(400, "BadRequestError");
		}
		if (error instanceof UpstreamTimeoutException) {
			return new ErrorAnswer(504, "GatewayTimeoutError");
		}
		if (error instanceof UpstreamSaturatedException) {
			return new ErrorAnswer(503, "ServiceUnavailableError");
		}
		if (error instanceof UpstreamUnavailableException) {
			return new ErrorAnswer(502, "BadGatewayError");
		}
		return new ErrorAnswer(500, "InternalServerError");
	}

	/**
	 * Reactor Netty's own request timeout (its class is not public), which times an
	 * HTTP/2 stream's request where {@link RequestTimeoutHandler} does not run.
	 */
	private static boolean isReactorNettyRequestTimeout(Throwable error) {
		return error.getClass().getName().equals("reactor.netty.http.server.RequestTimeoutException");
	}

}
