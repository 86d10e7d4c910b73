package dev.tokengap.sim;

import java.time.Duration;

/**
 * Faults of the {@code /metrics} endpoint set through {@code POST /sim/faults}: a delay
 * before the answer and a status to answer with instead of 200.
 *
 * @param metricsDelayMs delay in milliseconds, or {@code null} to use
 * {@code metrics-delay}
 * @param metricsStatus status to answer with, or {@code null} for a normal answer
 */
record MetricsFaults(Long metricsDelayMs, Integer metricsStatus) {

	static final MetricsFaults NONE = new MetricsFaults(null, null);

	Duration delay(Duration configured) {
		return (this.metricsDelayMs != null) ? Duration.ofMillis(this.metricsDelayMs) : configured;
	}

}
