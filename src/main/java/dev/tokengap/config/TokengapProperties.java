package dev.tokengap.config;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * Top-level settings ({@code tokengap.*}).
 *
 * @param mode {@code proxy} (default) or {@code simulator} (run only the built-in vLLM simulator)
 * @param stallThreshold a gap at or above this is a stall
 * @param shutdown graceful shutdown
 */
@Validated
@ConfigurationProperties("tokengap")
public record TokengapProperties(@DefaultValue("proxy") Mode mode, @DefaultValue("400ms") Duration stallThreshold,
		@DefaultValue Shutdown shutdown) {

	/**
	 * Graceful shutdown ({@code tokengap.shutdown.*}); applied through
	 * {@code spring.lifecycle.timeout-per-shutdown-phase}.
	 *
	 * @param drainTimeout how long streams in flight may finish after SIGTERM; new requests are
	 * refused meanwhile
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

		/** The proxy (and, with no upstream URL, the in-process simulator behind it). */
		PROXY,
		/** Only the vLLM simulator, on {@code tokengap.sim.port}. */
		SIMULATOR

	}

}
