package dev.tokengap.config;

import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.registry.otlp.OtlpMeterRegistry;

import org.springframework.boot.micrometer.metrics.autoconfigure.MeterRegistryCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * What tokengap exports over OTLP, when an endpoint is set: the GenAI metric names only
 * (its own series stay on {@code /actuator/prometheus}).
 */
@Configuration(proxyBeanMethods = false)
class OpenTelemetryConfiguration {

	/** The prefix of OpenTelemetry's GenAI metric names. */
	static final String GEN_AI = "gen_ai.";

	@Bean
	MeterRegistryCustomizer<OtlpMeterRegistry> genAiNamesOnly() {
		return (registry) -> registry.config()
			.meterFilter(MeterFilter.denyUnless((id) -> id.getName().startsWith(GEN_AI)));
	}

}
