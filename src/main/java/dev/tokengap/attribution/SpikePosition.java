package dev.tokengap.attribution;

/**
 * Where a spike sits in its stream: the first, middle or last third of the content events
 * of its choice. A spike is placed once the stream has ended (a cancelled or failed
 * stream by the events it had), as the metrics contract defines it.
 */
public enum SpikePosition {

	/** The first third. */
	HEAD("head"),

	/** The middle third. */
	MIDDLE("middle"),

	/** The last third. */
	TAIL("tail");

	private final String label;

	SpikePosition(String label) {
		this.label = label;
	}

	/**
	 * @return the {@code position} label value
	 */
	public String label() {
		return this.label;
	}

	/**
	 * The third of the stream an event falls in: event {@code i} of {@code n} is in the
	 * head when {@code 3i < n}, in the middle when {@code 3i < 2n}, else in the tail.
	 * @param index the event's index among its choice's content events (0 = first)
	 * @param events the stream's content events of that choice, more than {@code index}
	 * @return the position
	 */
	public static SpikePosition of(int index, int events) {
		if (index < 0 || events <= index) {
			throw new IllegalArgumentException("event " + index + " is not among " + events + " events");
		}
		long thrice = 3L * index;
		if (thrice < events) {
			return HEAD;
		}
		return (thrice < 2L * events) ? MIDDLE : TAIL;
	}

}
