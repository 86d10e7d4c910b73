package dev.tokengap.config;

import java.util.stream.Stream;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;

import dev.tokengap.attribution.AttributionProperties;
import dev.tokengap.metrics.MetricsProperties;
import dev.tokengap.metrics.TracingProperties;
import dev.tokengap.proxy.UpstreamProperties;
import dev.tokengap.sim.DemoProperties;
import dev.tokengap.sim.SimulatorProperties;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A value out of its range stops the start at binding, with the property's own name and
 * the value given, as an operator wrote them: each record checks its values in its
 * constructor, and Spring Boot reports the failure under the property's prefix.
 */
class PropertyRefusalsTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner().withUserConfiguration(Bound.class);

	static Stream<Arguments> refused() {
		return Stream.of(
				Arguments.of("tokengap.attribution.spike-factor=0.5", "spike-factor must be at least 1, got 0.5"),
				Arguments.of("tokengap.attribution.history=0", "history must be at least 1, got 0"),
				Arguments.of("tokengap.attribution.prefill-tokens=0", "prefill-tokens must be at least 1, got 0"),
				Arguments.of("tokengap.attribution.batch-growth=0.9", "batch-growth must be at least 1, got 0.9"),
				Arguments.of("tokengap.attribution.log-lines-per-second=-1",
						"log-lines-per-second must be at least 0, got -1"),
				Arguments.of("tokengap.attribution.prefill-rate=0", "prefill-rate must be at least 1, got 0"),
				Arguments.of("tokengap.tracing.sample-ratio=1.5", "sample-ratio must be between 0 and 1, got 1.5"),
				Arguments.of("tokengap.tracing.sample-ratio=-0.1", "sample-ratio must be between 0 and 1, got -0.1"),
				Arguments.of("tokengap.tracing.sample-ratio=NaN", "sample-ratio must be between 0 and 1, got NaN"),
				Arguments.of("tokengap.metrics.buckets= ", "buckets must not be blank"),
				Arguments.of("tokengap.metrics.max-models=0", "max-models must be at least 1, got 0"),
				Arguments.of("tokengap.demo.concurrency=0", "concurrency must be between 1 and 64, got 0"),
				Arguments.of("tokengap.demo.concurrency=65", "concurrency must be between 1 and 64, got 65"),
				Arguments.of("tokengap.upstream.max-connections=0", "max-connections must be at least 1, got 0"),
				Arguments.of("tokengap.sim.port=65536", "port must be between 0 and 65535, got 65536"),
				Arguments.of("tokengap.sim.model= ", "model must not be blank"),
				Arguments.of("tokengap.sim.num-speculative-tokens=17",
						"num-speculative-tokens must be between 0 and 16, got 17"),
				Arguments.of("tokengap.sim.spec-acceptance-rate=1.01",
						"spec-acceptance-rate must be between 0 and 1, got 1.01"),
				Arguments.of("tokengap.sim.step-cost-per-seq=-1ms",
						"step-cost-per-seq must not be negative, got PT-0.001S"),
				Arguments.of("tokengap.sim.chars-per-token=0", "chars-per-token must be positive, got 0"));
	}

	@ParameterizedTest
	@MethodSource("refused")
	void aValueOutOfItsRangeStopsTheStartNamingIt(String property, String message) {
		String key = property.substring(0, property.indexOf('='));
		String prefix = key.substring(0, key.lastIndexOf('.'));
		this.runner.withPropertyValues(property).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).hasMessageContaining(prefix)
				.rootCause()
				.hasMessageContaining(message);
		});
	}

	@ParameterizedTest
	@MethodSource("accepted")
	void theEdgesOfEachRangeAreAccepted(String property) {
		this.runner.withPropertyValues(property).run((context) -> assertThat(context).hasNotFailed());
	}

	static Stream<String> accepted() {
		return Stream.of("tokengap.attribution.spike-factor=1", "tokengap.attribution.log-lines-per-second=0",
				"tokengap.tracing.sample-ratio=0", "tokengap.tracing.sample-ratio=1", "tokengap.demo.concurrency=64",
				"tokengap.upstream.max-connections=1", "tokengap.sim.port=0", "tokengap.sim.num-speculative-tokens=16",
				"tokengap.sim.step-cost-per-seq=0ms");
	}

	@Configuration(proxyBeanMethods = false)
	@EnableConfigurationProperties({ AttributionProperties.class, TracingProperties.class, MetricsProperties.class,
			DemoProperties.class, UpstreamProperties.class, SimulatorProperties.class })
	static class Bound {

	}

}
