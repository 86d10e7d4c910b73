package dev.tokengap.sim;

/**
 * A request vLLM would refuse before streaming, with the status and error type vLLM
 * answers with.
 */
final class InvalidRequestException extends RuntimeException {

	private final int status;

	private final String type;

	private final String param;

	private InvalidRequestException(int status, String type, String param, String message) {
		super(message, null, false, false);
		this.status = status;
		this.type = type;
		this.param = param;
	}

	static InvalidRequestException badRequest(String message) {
		return new InvalidRequestException(400, "BadRequestError", null, message);
	}

	static InvalidRequestException unknownModel(String model) {
		return new InvalidRequestException(404, "NotFoundError", "model", "The model `" + model + "` does not exist.");
	}

	/**
	 * The engine refuses new work for now, as vLLM does once its waiting queue holds
	 * {@code --max-num-queued-reqs} requests.
	 */
	static InvalidRequestException serviceUnavailable(String message) {
		return new InvalidRequestException(503, "ServiceUnavailableError", null, message);
	}

	int status() {
		return this.status;
	}

	String type() {
		return this.type;
	}

	String param() {
		return this.param;
	}

}
