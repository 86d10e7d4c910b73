package dev.tokengap.config;

import java.time.Duration;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.registry.otlp.OtlpMeterRegistry;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import io.opentelemetry.sdk.trace.samplers.Sampler;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.micrometer.metrics.autoconfigure.MeterRegistryCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;

import dev.tokengap.metrics.TracingProperties;
import dev.tokengap.tracing.SpanDrops;

/**
 * What tokengap exports over OTLP, each only when its endpoint is set: the GenAI metric
 * names (its own series stay on {@code /actuator/prometheus}), and one span per request.
 */
@Configuration(proxyBeanMethods = false)
class OpenTelemetryConfiguration {

	/** The prefix of OpenTelemetry's GenAI metric names. */
	static final String GEN_AI = "gen_ai.";

	static final String SPANS_ENDPOINT = "management.opentelemetry.tracing.export.otlp.endpoint";

	@Bean
	MeterRegistryCustomizer<OtlpMeterRegistry> genAiNamesOnly() {
		return (registry) -> registry.config()
			.meterFilter(MeterFilter.denyUnless((id) -> id.getName().startsWith(GEN_AI)));
	}

	/**
	 * Spans over OTLP/HTTP with Spring Boot's property for the endpoint: exported in the
	 * background by the SDK's batch processor from a bounded queue (2048 spans, batches
	 * of 512, every 5 s), so a collector that is down costs the spans it misses, counted
	 * in {@code tokengap_spans_dropped_total}.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnProperty(SPANS_ENDPOINT)
	@Conditional(ProxyModeCondition.class)
	static class SpanExport {

		@Bean(destroyMethod = "")
		SpanDrops spanDrops(MeterRegistry registry) {
			SpanDrops drops = new SpanDrops();
			FunctionCounter.builder("tokengap.spans.dropped", drops, SpanDrops::queueFull)
				.description("Spans not exported: the export queue was full, or the collector failed the export")
				.tag("reason", "queue_full")
				.register(registry);
			FunctionCounter.builder("tokengap.spans.dropped", drops, SpanDrops::exportFailed)
				.description("Spans not exported: the export queue was full, or the collector failed the export")
				.tag("reason", "export_failed")
				.register(registry);
			return drops;
		}

		@Bean(destroyMethod = "close")
		SdkTracerProvider tokengapTracerProvider(@Value("${" + SPANS_ENDPOINT + "}") String endpoint,
				ObjectProvider<Resource> resource, TracingProperties tracing, SpanDrops drops) {
			OtlpHttpSpanExporter exporter = OtlpHttpSpanExporter.builder()
				.setEndpoint(endpoint)
				.setTimeout(Duration.ofSeconds(10))
				.setMeterProvider(drops::meterProvider)
				.build();
			return SdkTracerProvider.builder()
				.setResource(resource.getIfAvailable(Resource::getDefault))
				.setSampler(Sampler.parentBased(Sampler.traceIdRatioBased(tracing.sampleRatio())))
				.addSpanProcessor(BatchSpanProcessor.builder(exporter).setMeterProvider(drops.meterProvider()).build())
				.build();
		}

		@Bean
		Tracer tokengapTracer(SdkTracerProvider tokengapTracerProvider) {
			return tokengapTracerProvider.get("dev.tokengap");
		}

	}

}
