package dev.tokengap.attribution;

import dev.tokengap.timing.ContentWrite;
import dev.tokengap.timing.StreamTimer;

/**
 * The times of one gap: the choice's content events at both of its ends, and how long
 * writes inside it waited for the client's socket. Made once per spike, from the timer
 * and the event that ended the gap.
 *
 * @param previous the choice's previous content event
 * @param event the content event that ended the gap
 * @param writeStartNanos when the write of {@code event} started on the client's event
 * loop
 * @param earlierWaitNanos time earlier writes inside the gap waited for the client's
 * socket (the engine is not read meanwhile)
 */
record GapWindow(EventTimes previous, EventTimes event, long writeStartNanos, long earlierWaitNanos) {

	/**
	 * The gap that {@code event} ends, before the timer has counted it.
	 * @param timer the stream's timer, still at the choice's previous content event
	 * @param choice the choice index
	 * @param event the content event that ends the gap
	 * @return the gap's times
	 */
	static GapWindow of(StreamTimer timer, int choice, ContentWrite event) {
		return new GapWindow(new EventTimes(timer.lastArrivalNanos(choice), timer.lastContentNanos(choice)),
				new EventTimes(event.arrivalNanos(), event.writeNanos()), event.writeStartNanos(),
				event.earlierWaitNanos());
	}

	/**
	 * @return the gap as the client saw it: write to write
	 */
	long gapNanos() {
		return this.event.writeNanos() - this.previous.writeNanos();
	}

	/**
	 * @return the gap as tokengap read it from upstream: arrival to arrival
	 */
	long upstreamGapNanos() {
		return this.event.arrivalNanos() - this.previous.arrivalNanos();
	}

	/**
	 * The part of the upstream gap that the engine took: tokengap does not read the
	 * engine while a write waits for the client's socket.
	 */
	long engineGapNanos() {
		return upstreamGapNanos() - this.earlierWaitNanos;
	}

	/**
	 * @return from the arrival of the event that ended the gap to its write's completion
	 */
	long writeDelayNanos() {
		return this.event.writeNanos() - this.event.arrivalNanos();
	}

	/**
	 * Time the writes inside the gap waited for the client's socket: this event's (the
	 * part of its write delay after the write started) and earlier ones'.
	 */
	long socketWaitNanos() {
		return this.event.writeNanos() - this.writeStartNanos + this.earlierWaitNanos;
	}

}
