package dev.tokengap.attribution;

/**
 * A gap that crossed the spike threshold, as seen at the moment it was written: what the
 * attributor needs once the engine samples around it have arrived.
 *
 * @param requestId the stream's request id
 * @param model the bounded model label
 * @param endpoint the endpoint label
 * @param choice the choice index the gap belongs to
 * @param tokenIndex index of the content event that ended the gap among its choice's (0 = first)
 * @param thresholdNanos the spike threshold that applied
 * @param previousArrivalNanos upstream arrival of the choice's previous content event
 * @param previousWriteNanos client write of the choice's previous content event
 * @param arrivalNanos upstream arrival of this event
 * @param writeStartNanos when the write of this event started on the client's event loop
 * @param writeNanos client write of this event
 * @param earlierWaitNanos time earlier writes inside the gap waited for the client's socket (the
 * engine is not read meanwhile)
 * @param epochMillis wall-clock time of the write, for the record
 */
record Spike(String requestId, String model, String endpoint, int choice, int tokenIndex, long thresholdNanos,
		long previousArrivalNanos, long previousWriteNanos, long arrivalNanos, long writeStartNanos, long writeNanos,
		long earlierWaitNanos, long epochMillis) {

	long gapNanos() {
		return this.writeNanos - this.previousWriteNanos;
	}

	long upstreamGapNanos() {
		return this.arrivalNanos - this.previousArrivalNanos;
	}

	/**
	 * The part of the upstream gap that the engine took: tokengap does not read the engine while
	 * a write waits for the client's socket.
	 */
	long engineGapNanos() {
		return upstreamGapNanos() - this.earlierWaitNanos;
	}

	long writeDelayNanos() {
		return this.writeNanos - this.arrivalNanos;
	}

	/**
	 * Time the writes inside the gap waited for the client's socket: this event's (the part of its
	 * write delay after the write started) and earlier ones'.
	 */
	long socketWaitNanos() {
		return this.writeNanos - this.writeStartNanos + this.earlierWaitNanos;
	}

}
