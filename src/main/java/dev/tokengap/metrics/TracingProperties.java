package dev.tokengap.metrics;

import jakarta.validation.constraints.DecimalMax;
import jakarta.validation.constraints.DecimalMin;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * Trace context settings ({@code tokengap.tracing.*}).
 *
 * @param sampleRatio the share of requests without a valid {@code traceparent} whose new
 * trace is marked sampled, from 0 to 1 (a client's trace keeps the client's flag)
 */
@Validated
@ConfigurationProperties("tokengap.tracing")
public record TracingProperties(@DefaultValue("1.0") @DecimalMin("0.0") @DecimalMax("1.0") double sampleRatio) {

}
