package dev.tokengap.timing;

/**
 * The times of one content event on its way through tokengap, by name: one per stream,
 * filled by the relay as the event moves and reused for the next, so that naming each
 * time costs no allocation on the event loop. A {@link GapObserver} reads it only during
 * the call that hands it over: the values change with the stream's next event, so an
 * observer copies what it keeps.
 */
public final class ContentWrite {

	private long arrivalNanos;

	private long writeStartNanos;

	private long writeNanos;

	private long earlierWaitNanos;

	/**
	 * @return when the event's last byte was read from upstream
	 */
	public long arrivalNanos() {
		return this.arrivalNanos;
	}

	/**
	 * @param arrivalNanos when the event's last byte was read from upstream
	 */
	public void setArrivalNanos(long arrivalNanos) {
		this.arrivalNanos = arrivalNanos;
	}

	/**
	 * @return when its write to the client started (on the client's event loop)
	 */
	public long writeStartNanos() {
		return this.writeStartNanos;
	}

	/**
	 * @param writeStartNanos when its write to the client started
	 */
	public void setWriteStartNanos(long writeStartNanos) {
		this.writeStartNanos = writeStartNanos;
	}

	/**
	 * @return when its write to the client completed
	 */
	public long writeNanos() {
		return this.writeNanos;
	}

	/**
	 * @param writeNanos when its write to the client completed
	 */
	public void setWriteNanos(long writeNanos) {
		this.writeNanos = writeNanos;
	}

	/**
	 * Time that earlier writes since the choice's previous content event (bytes of no
	 * content event, such as the first part of an event split across upstream buffers)
	 * waited for the client's socket: while a write waits, the engine is not read, so
	 * this much of the upstream gap is the client's, not the engine's.
	 * @return nanoseconds
	 */
	public long earlierWaitNanos() {
		return this.earlierWaitNanos;
	}

	/**
	 * @param earlierWaitNanos see {@link #earlierWaitNanos()}
	 */
	public void setEarlierWaitNanos(long earlierWaitNanos) {
		this.earlierWaitNanos = earlierWaitNanos;
	}

}
