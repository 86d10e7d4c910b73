package dev.tokengap.sim;

/**
 * The engine's own timestamps of one finished sequence, as vLLM's
 * {@code RequestStateStats} keeps them: {@link System#nanoTime()} readings of the engine
 * thread (a step's end for the tokens), so nothing the HTTP layer does after a token was
 * handed over is in them.
 *
 * @param arrivalNanos when the request reached the engine (vLLM's {@code queued_ts})
 * @param firstScheduledNanos when the scheduler first admitted it ({@code scheduled_ts})
 * @param firstTokenNanos the end of the step that produced its first token
 * ({@code first_token_ts})
 * @param lastTokenNanos the end of the step that produced its last token
 * ({@code last_token_ts}); preemptions on the way are in between
 * @param generatedTokens output tokens, accepted drafts included
 */
record RequestTimings(long arrivalNanos, long firstScheduledNanos, long firstTokenNanos, long lastTokenNanos,
		int generatedTokens) {

	static RequestTimings of(SimSequence sequence) {
		return new RequestTimings(sequence.arrivalNanos, sequence.firstScheduledNanos, sequence.firstTokenNanos,
				sequence.lastTokenNanos, sequence.generated);
	}

}
