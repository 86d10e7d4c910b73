package dev.tokengap.sim;

/**
 * vLLM's per-request {@code metrics} object ({@code --enable-per-request-metrics}, vLLM
 * PR #46768, {@code build_per_request_timing_metrics}), from the engine's timestamps of
 * the request's one sequence, in milliseconds written as Python writes floats:
 *
 * <pre>
 * time_to_first_token_ms  first token - first scheduled
 * generation_time_ms      last token - first token        (decode, preemptions included)
 * queue_time_ms           first scheduled - arrival
 * mean_itl_ms             generation_time_ms / (tokens - 1), null for one token
 * tokens_per_second       tokens / (last token - first scheduled)
 * </pre>
 */
final class PerRequestMetrics {

	private PerRequestMetrics() {
	}

	/**
	 * The object as the request's response writes it.
	 * @param timings the sequence's engine timestamps
	 * @param dropNulls whether fields that are {@code null} are left out, as in the final
	 * usage chunk of a chat or completions stream (vLLM writes it with
	 * {@code exclude_none=True}); else they are written {@code null}
	 * @return the JSON object
	 */
	static String json(RequestTimings timings, boolean dropNulls) {
		double generation = millis(timings.lastTokenNanos() - timings.firstTokenNanos());
		double inference = millis(timings.lastTokenNanos() - timings.firstScheduledNanos());
		int tokens = timings.generatedTokens();
		StringBuilder json = new StringBuilder(160).append('{');
		field(json, "time_to_first_token_ms", millis(timings.firstTokenNanos() - timings.firstScheduledNanos()),
				dropNulls);
		field(json, "generation_time_ms", generation, dropNulls);
		field(json, "queue_time_ms", millis(timings.firstScheduledNanos() - timings.arrivalNanos()), dropNulls);
		field(json, "mean_itl_ms", (tokens > 1) ? generation / (tokens - 1) : null, dropNulls);
		field(json, "tokens_per_second", (inference > 0) ? tokens / inference * 1000 : null, dropNulls);
		return json.append('}').toString();
	}

	private static void field(StringBuilder json, String name, Double value, boolean dropNulls) {
		if (value == null && dropNulls) {
			return;
		}
		if (json.length() > 1) {
			json.append(',');
		}
		json.append('"').append(name).append("\":").append((value != null) ? PythonFloats.repr(value) : "null");
	}

	private static double millis(long nanos) {
		return nanos / 1e6;
	}

}
