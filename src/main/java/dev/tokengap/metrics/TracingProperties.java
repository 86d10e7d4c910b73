package dev.tokengap.metrics;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Trace context settings ({@code tokengap.tracing.*}).
 *
 * @param sampleRatio the share of requests without a valid {@code traceparent} whose new
 * trace is marked sampled, from 0 to 1 (a client's trace keeps the client's flag)
 */
@ConfigurationProperties("tokengap.tracing")
public record TracingProperties(@DefaultValue("1.0") double sampleRatio) {

	public TracingProperties {
		if (!(sampleRatio >= 0 && sampleRatio <= 1)) {
			throw new IllegalArgumentException(
					"tokengap.tracing.sample-ratio must be between 0 and 1, got " + sampleRatio);
		}
	}

}
