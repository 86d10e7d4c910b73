package dev.tokengap.timing;

/**
 * Told about every stream's first content event and every later gap, as they are written
 * to the client. Called on the client connection's event loop for every event:
 * implementations must return at once and allocate nothing unless they keep the event (a
 * spike).
 */
public interface GapObserver {

	/** An observer that ignores everything. */
	GapObserver NONE = new GapObserver() {

		@Override
		public void firstContent(ContentWrite event, long promptTokens) {
		}

		@Override
		public void gap(StreamTimer timer, int choice, String requestId, String model, String endpoint,
				ContentWrite event) {
		}

	};

	/**
	 * A stream started: its answer is a live stream from now on. Called once per stream,
	 * on its client connection's event loop.
	 * @param timer the stream's timer
	 * @param requestId the request id
	 * @param promptTokens the request's estimated prompt size
	 */
	default void streamStarted(StreamTimer timer, String requestId, long promptTokens) {
	}

	/**
	 * A stream ended, however it ended. Called once per started stream, on any thread.
	 * @param timer the stream's timer
	 */
	default void streamEnded(StreamTimer timer) {
	}

	/**
	 * A stream's first content event of any choice (its prefill has finished).
	 * @param event its times, valid during this call only
	 * @param promptTokens the request's estimated prompt size
	 */
	void firstContent(ContentWrite event, long promptTokens);

	/**
	 * A content event after the first of its choice, called before the timer counts it,
	 * so the timer still describes the stream so far (the choice's last write and arrival
	 * times, the stream's gap count and median gap).
	 * @param timer the stream's timer
	 * @param choice the choice index the gap belongs to
	 * @param requestId the request id
	 * @param model the bounded model label
	 * @param endpoint the endpoint label
	 * @param event the times of the event that ends the gap (its arrival, its write's
	 * start and end, the socket wait of earlier writes inside the gap), valid during this
	 * call only
	 */
	void gap(StreamTimer timer, int choice, String requestId, String model, String endpoint, ContentWrite event);

}
