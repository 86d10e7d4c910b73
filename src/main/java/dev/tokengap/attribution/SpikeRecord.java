package dev.tokengap.attribution;

import java.time.Instant;

/**
 * One attributed spike, as logged and served newest-first at {@code /actuator/spikes}. Carries no
 * prompt or completion text.
 *
 * @param time when the event that ended the gap was written to the client
 * @param requestId the request id
 * @param model the bounded model label
 * @param endpoint the endpoint label
 * @param choice the choice index the gap belongs to
 * @param tokenIndex index of the content event that ended the gap among its choice's
 * @param gapMs the client-visible gap
 * @param thresholdMs the spike threshold that applied
 * @param upstreamGapMs the same gap as it arrived from the engine
 * @param writeDelayMs client write time minus upstream arrival of the event
 * @param socketWaitMs time writes inside the gap spent waiting for the client's socket
 * @param cause the attributed cause
 * @param evidence everything gathered, whatever the cause
 */
public record SpikeRecord(Instant time, String requestId, String model, String endpoint, int choice, int tokenIndex,
		double gapMs, double thresholdMs, double upstreamGapMs, double writeDelayMs, double socketWaitMs, String cause,
		Evidence evidence) {

	static SpikeRecord of(Spike spike, SpikeCause cause, Evidence evidence) {
		return new SpikeRecord(Instant.ofEpochMilli(spike.epochMillis()), spike.requestId(), spike.model(),
				spike.endpoint(), spike.choice(), spike.tokenIndex(), millis(spike.gapNanos()), millis(spike.thresholdNanos()),
				millis(spike.upstreamGapNanos()), millis(spike.writeDelayNanos()), millis(spike.socketWaitNanos()),
				cause.label(), evidence);
	}

	private static double millis(long nanos) {
		return Math.round(nanos / 1e4) / 100.0;
	}

}
