package dev.tokengap.backend;

/**
 * What tells one engine behind a metrics URL from another: the process start time vLLM's
 * {@code prometheus_client} exports ({@code process_start_time_seconds}, or, where it is
 * absent, the creation time of {@code vllm:num_preemptions}), the data-parallel
 * {@code engine} label values and the model name its series carry. Two pods of one
 * Deployment differ only by start time.
 *
 * @param startTime the engine's start, seconds since the epoch; NaN when the exposition
 * has none
 * @param engines the {@code engine} label values, sorted, comma-separated ({@code ""}
 * when none)
 * @param models the {@code model_name} label values, sorted, comma-separated
 */
public record EngineIdentity(double startTime, String engines, String models) {

	/**
	 * Whether another identity could be this engine after a restart: the same engines and
	 * model, started later (or of unknown start).
	 * @param earlier the identity seen before
	 * @return whether this may be {@code earlier} restarted
	 */
	boolean mayRestart(EngineIdentity earlier) {
		return this.engines.equals(earlier.engines) && this.models.equals(earlier.models)
				&& !(this.startTime <= earlier.startTime);
	}

	/**
	 * Whether the start time is known, so that a change of it tells engines apart.
	 * @return whether {@code startTime} is a number
	 */
	boolean startKnown() {
		return !Double.isNaN(this.startTime);
	}

}
