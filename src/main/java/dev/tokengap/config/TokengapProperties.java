package dev.tokengap.config;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Top-level settings ({@code tokengap.*}).
 *
 * @param mode {@code proxy} (default: in front of {@code tokengap.upstream.url}, which
 * must be set), {@code demo} (the proxy in front of the built-in simulator, with a demo
 * load) or {@code simulator} (run only the built-in vLLM simulator)
 * @param stallThreshold a gap at or above this is a stall
 * @param shutdown graceful shutdown
 */
@ConfigurationProperties("tokengap")
public record TokengapProperties(@DefaultValue("proxy") Mode mode, @DefaultValue("400ms") Duration stallThreshold,
		@DefaultValue Shutdown shutdown) {

	/**
	 * Graceful shutdown ({@code tokengap.shutdown.*}); applied through
	 * {@code spring.lifecycle.timeout-per-shutdown-phase}.
	 *
	 * @param drainTimeout how long streams in flight may finish after SIGTERM; new
	 * requests are refused meanwhile
	 */
	public record Shutdown(@DefaultValue("30s") Duration drainTimeout) {
	}

	public TokengapProperties {
		if (stallThreshold.isNegative() || stallThreshold.isZero()) {
			throw new IllegalArgumentException("tokengap.stall-threshold must be positive, got " + stallThreshold);
		}
	}

	/** What the process runs. */
	public enum Mode {

		/**
		 * The proxy in front of {@code tokengap.upstream.url}; refuses to start without
		 * it.
		 */
		PROXY,
		/**
		 * The proxy in front of the in-process simulator, with a demo load: asked for,
		 * never implied.
		 */
		DEMO,
		/** Only the vLLM simulator, on {@code tokengap.sim.port}. */
		SIMULATOR

	}

}
