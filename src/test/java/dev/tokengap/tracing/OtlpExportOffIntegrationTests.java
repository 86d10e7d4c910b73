package dev.tokengap.tracing;

import io.micrometer.registry.otlp.OtlpMeterRegistry;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.ApplicationContext;

import dev.tokengap.metrics.RequestTracer;
import dev.tokengap.metrics.W3cRequestTracer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Without an OTLP endpoint nothing is exported and nothing is built for it: no OTLP
 * registry (so no GenAI instruments), no span pipeline, and trace context without a
 * tracing library.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=0", "tokengap.mode=demo", "tokengap.demo.load=false" })
class OtlpExportOffIntegrationTests {

	@Autowired
	ApplicationContext context;

	@Test
	void withoutEndpointsThereIsNoOtlpRegistryNoSpanPipelineAndW3cTraceContextAlone() {
		assertThat(this.context.getBeansOfType(OtlpMeterRegistry.class)).isEmpty();
		assertThat(this.context.getBeansOfType(SdkTracerProvider.class)).isEmpty();
		assertThat(this.context.getBeansOfType(SpanDrops.class)).isEmpty();
		assertThat(this.context.getBean(RequestTracer.class)).isInstanceOf(W3cRequestTracer.class);
	}

}
