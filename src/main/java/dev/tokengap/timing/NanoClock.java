package dev.tokengap.timing;

/**
 * A monotonic clock in nanoseconds, injectable so that tests are deterministic.
 */
@FunctionalInterface
public interface NanoClock {

	/** The system's monotonic clock. */
	NanoClock SYSTEM = System::nanoTime;

	/**
	 * Returns the current value of the clock.
	 * @return nanoseconds from an arbitrary origin
	 */
	long nanoTime();

}
