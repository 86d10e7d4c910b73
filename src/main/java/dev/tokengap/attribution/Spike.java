package dev.tokengap.attribution;

/**
 * A gap that crossed the spike threshold, as seen at the moment it was written: what the
 * attributor needs once the engine samples around it have arrived.
 *
 * @param requestId the stream's request id
 * @param model the bounded model label
 * @param endpoint the endpoint label
 * @param choice the choice index the gap belongs to
 * @param tokenIndex index of the content event that ended the gap among its choice's (0 =
 * first)
 * @param thresholdNanos the spike threshold that applied
 * @param window the gap's times
 * @param epochMillis wall-clock time of the write, for the record
 * @param traceId the stream's W3C trace id, or null
 */
record Spike(String requestId, String model, String endpoint, int choice, int tokenIndex, long thresholdNanos,
		GapWindow window, long epochMillis, String traceId) {

	/**
	 * @return upstream arrival of the choice's previous content event
	 */
	long previousArrivalNanos() {
		return this.window.previous().arrivalNanos();
	}

	/**
	 * @return upstream arrival of the event that ended the gap
	 */
	long arrivalNanos() {
		return this.window.event().arrivalNanos();
	}

	/**
	 * @return see {@link GapWindow#earlierWaitNanos()}
	 */
	long earlierWaitNanos() {
		return this.window.earlierWaitNanos();
	}

	long gapNanos() {
		return this.window.gapNanos();
	}

	long upstreamGapNanos() {
		return this.window.upstreamGapNanos();
	}

	/**
	 * @return see {@link GapWindow#engineGapNanos()}
	 */
	long engineGapNanos() {
		return this.window.engineGapNanos();
	}

	long writeDelayNanos() {
		return this.window.writeDelayNanos();
	}

	/**
	 * @return see {@link GapWindow#socketWaitNanos()}
	 */
	long socketWaitNanos() {
		return this.window.socketWaitNanos();
	}

}
