package dev.tokengap.attribution;

/**
 * One content event at tokengap's two ends, as a spike keeps it.
 *
 * @param arrivalNanos when its last byte was read from upstream
 * @param writeNanos when its write to the client completed
 */
record EventTimes(long arrivalNanos, long writeNanos) {

}
