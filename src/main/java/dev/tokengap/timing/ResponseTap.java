package dev.tokengap.timing;

import java.nio.ByteBuffer;

/**
 * The one seam between the transport and everything that measures a response: the
 * transport says what happened to the engine's bytes, and in which order; what that means
 * (SSE events, gap clocks, outcomes, the hand-off to spike detection) is decided behind
 * it. It knows no HTTP library, so it is tested on a fake clock in any order the
 * transport may produce.
 *
 * <pre>
 *  engine bytes ──▶ received(bytes, t)   scanned in place, events noted as pending
 *  write starts ──▶ writeStarted(t)
 *  write's future ─▶ written(t)          pending events timed at t
 *  terminal ──────▶ ended(how, t)        the outcome said once; later calls are ignored
 * </pre>
 *
 * Calls come from one thread at a time (the client connection's event loop). A write that
 * completes after {@link #ended} times nothing; an end with writes pending drops their
 * events (they never reached the client).
 */
public interface ResponseTap {

	/** A tap that measures nothing (responses that are only forwarded). */
	ResponseTap NONE = new ResponseTap() {

		@Override
		public boolean readsBytes() {
			return false;
		}

		@Override
		public void received(ByteBuffer bytes, long arrivalNanos) {
		}

		@Override
		public void writeStarted(long nanos) {
		}

		@Override
		public void written(long nanos) {
		}

		@Override
		public void ended(Ending ending, long nanos) {
		}

	};

	/**
	 * Whether {@link #received} reads the bytes it is given; when it does not, the
	 * transport may give it none (and spare itself a copy).
	 * @return whether the bytes are read
	 */
	default boolean readsBytes() {
		return true;
	}

	/**
	 * Bytes of the engine's response body arrived. The bytes of one read may come in
	 * several calls, each with the read's arrival time, before their write starts.
	 * @param bytes the bytes, from position to limit, readable during this call only
	 * @param arrivalNanos when they were read from the engine
	 */
	void received(ByteBuffer bytes, long arrivalNanos);

	/**
	 * The write to the client of every byte received so far started.
	 * @param nanos when
	 */
	void writeStarted(long nanos);

	/**
	 * The write to the client of every byte received so far completed: the client's
	 * socket took them.
	 * @param nanos when the write's future completed
	 */
	void written(long nanos);

	/**
	 * The relay of the response ended; the first ending said is the outcome.
	 * @param ending how it ended
	 * @param nanos when
	 */
	void ended(Ending ending, long nanos);

	/** How the relay of a response ended, as the transport saw it. */
	enum Ending {

		/** The engine's body ended and every byte of it was written to the client. */
		ENGINE_COMPLETED,

		/** The engine's connection failed mid-body (reset, broken framing). */
		ENGINE_FAILED,

		/** The engine sent nothing for the idle timeout. */
		ENGINE_TIMED_OUT,

		/** The client went away, or its socket took nothing for the send timeout. */
		CLIENT_GONE,

		/** A write to the client failed while its connection stayed open. */
		WRITE_FAILED

	}

}
