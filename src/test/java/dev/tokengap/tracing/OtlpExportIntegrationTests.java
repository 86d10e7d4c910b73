package dev.tokengap.tracing;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.opentelemetry.proto.metrics.v1.HistogramDataPoint;
import io.opentelemetry.proto.metrics.v1.Metric;
import io.opentelemetry.proto.trace.v1.Span;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.tokengap.metrics.BucketEdges;
import dev.tokengap.metrics.GenAiMeters;
import dev.tokengap.testsupport.OtlpReceiver;
import dev.tokengap.testsupport.OtlpReceiver.Received;
import dev.tokengap.testsupport.PrometheusText;
import dev.tokengap.testsupport.StreamingClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * tokengap in front of its built-in simulator over real HTTP, exporting spans and the
 * GenAI metrics over OTLP/HTTP to a real receiver that decodes OpenTelemetry's protobuf;
 * the simulator exports its own {@code llm_request} spans to the same receiver. A client
 * with a trace of its own streams a chat completion whose engine stalls 800 ms at token
 * 12: the receiver finds tokengap's span (child of the client's), what it measured, the
 * spike's event, the engine's span as tokengap's child, and the four GenAI histograms
 * with the Prometheus series' bucket edges.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=0", "tokengap.mode=demo", "tokengap.demo.load=false",
				"tokengap.sim.step-fixed-cost=5ms", "management.otlp.metrics.export.step=1s",
				"tokengap.metrics.models=sim-llama-3-8b" })
class OtlpExportIntegrationTests {

	private static final Duration WAIT = Duration.ofSeconds(30);

	private static final OtlpReceiver receiver = OtlpReceiver.start();

	private static final String CLIENT_TRACE = "0af7651916cd43dd8448eb211c80319c";

	private static final String CLIENT_SPAN = "b7ad6b7169203331";

	/** The 400 ms stall threshold, in seconds: the engine's stall is longer. */
	private static final double STALL = 0.4;

	private static final String SECRET = "the secret prompt text";

	@LocalServerPort
	int port;

	@LocalManagementPort
	int managementPort;

	@DynamicPropertySource
	static void endpoints(DynamicPropertyRegistry registry) {
		registry.add("management.otlp.metrics.export.url", receiver::metricsUrl);
		registry.add("management.opentelemetry.tracing.export.otlp.endpoint", receiver::tracesUrl);
		registry.add("tokengap.sim.otlp-traces-endpoint", receiver::tracesUrl);
	}

	@AfterAll
	static void stop() {
		receiver.close();
	}

	@Test
	void aStalledStreamsSpanItsSpikeTheEnginesChildSpanAndTheGenAiHistogramsReachTheCollector() {
		String body = "{\"model\":\"sim-llama-3-8b\",\"stream\":true,\"max_tokens\":30,"
				+ "\"stream_options\":{\"include_usage\":true},\"messages\":[{\"role\":\"user\",\"content\":\"" + SECRET
				+ "\"}]}";
		StreamingClient.Exchange exchange = StreamingClient.at("http://127.0.0.1:" + this.port)
			.post("/v1/chat/completions", body, Map.of("traceparent", "00-" + CLIENT_TRACE + "-" + CLIENT_SPAN + "-01",
					"X-Sim-Engine-Stall", "12:800"));
		assertThat(exchange.status()).isEqualTo(200);
		assertThat(exchange.contentEvents()).hasSize(30);

		Received<Span> tokengapSpan = receiver.awaitSpan((s) -> s.item().getName().equals("chat sim-llama-3-8b"), WAIT);
		assertThat(tokengapSpan.serviceName()).isEqualTo("tokengap");
		Span tokengap = tokengapSpan.item();
		assertThat(OtlpReceiver.hex(tokengap.getTraceId())).isEqualTo(CLIENT_TRACE);
		assertThat(OtlpReceiver.hex(tokengap.getParentSpanId())).isEqualTo(CLIENT_SPAN);
		assertThat(tokengap.getKind()).isEqualTo(Span.SpanKind.SPAN_KIND_SERVER);
		Map<String, Object> attributes = OtlpReceiver.plain(tokengap.getAttributesList());
		assertThat(attributes).containsEntry("gen_ai.operation.name", "chat")
			.containsEntry("gen_ai.provider.name", "vllm")
			.containsEntry("gen_ai.request.model", "sim-llama-3-8b")
			.containsEntry("gen_ai.request.stream", true)
			.containsEntry("gen_ai.usage.output_tokens", 30L)
			.containsEntry("http.response.status_code", 200L)
			.containsEntry("tokengap.outcome", "completed")
			.containsEntry("tokengap.stream.content_events", 30L)
			.doesNotContainKey("error.type");
		assertThat((double) attributes.get("gen_ai.response.time_to_first_chunk")).isPositive();
		double maxGap = (double) attributes.get("tokengap.stream.max_gap");
		assertThat(maxGap).as("the stall, over the 400 ms stall threshold").isGreaterThanOrEqualTo(STALL);
		assertThat((double) attributes.get("tokengap.stream.p99_gap")).isGreaterThanOrEqualTo(STALL);
		assertThat((long) attributes.get("tokengap.stream.stalls")).isGreaterThanOrEqualTo(1);
		double spanSeconds = (tokengap.getEndTimeUnixNano() - tokengap.getStartTimeUnixNano()) / 1e9;
		assertThat(spanSeconds).isGreaterThan(maxGap).isLessThan(WAIT.toSeconds());

		List<Span.Event> spikes = tokengap.getEventsList()
			.stream()
			.filter((event) -> event.getName().equals("tokengap.spike"))
			.toList();
		assertThat(spikes).isNotEmpty();
		Span.Event stall = spikes.stream()
			.filter((
					event) -> (double) OtlpReceiver.plain(event.getAttributesList()).get("tokengap.spike.gap") >= STALL)
			.findFirst()
			.orElseThrow(() -> new AssertionError("no spike event of the stall: " + spikes));
		Map<String, Object> spike = OtlpReceiver.plain(stall.getAttributesList());
		assertThat(spike).containsKeys("tokengap.spike.token_index", "tokengap.spike.choice", "tokengap.spike.cause",
				"tokengap.spike.scope");
		assertThat((String) spike.get("tokengap.spike.cause")).isNotBlank();
		assertThat((double) spike.get("tokengap.spike.gap")).isCloseTo(maxGap, within(1e-4));
		assertThat((long) spike.get("tokengap.spike.token_index")).isBetween(11L, 13L);
		assertThat(stall.getTimeUnixNano()).isBetween(tokengap.getStartTimeUnixNano(), tokengap.getEndTimeUnixNano());

		Received<Span> engine = receiver.awaitSpan((s) -> s.item().getName().equals("llm_request")
				&& OtlpReceiver.hex(s.item().getTraceId()).equals(CLIENT_TRACE), WAIT);
		assertThat(OtlpReceiver.hex(engine.item().getParentSpanId())).as("the engine's parent is tokengap's span")
			.isEqualTo(OtlpReceiver.hex(tokengap.getSpanId()));
		assertThat(engine.serviceName()).isEqualTo("vllm-simulator");
		assertThat(OtlpReceiver.plain(engine.item().getAttributesList())).containsKey("gen_ai.latency.time_in_queue")
			.containsEntry("gen_ai.usage.completion_tokens", 30L);

		assertThat(receiver.spans()).as("no prompt or completion text leaves in a span")
			.noneMatch((s) -> s.item().toString().contains(SECRET));

		assertHistogram(GenAiMeters.TIME_TO_FIRST_CHUNK, BucketEdges.VLLM_V1.ttft(), 1);
		assertHistogram(GenAiMeters.TIME_PER_OUTPUT_CHUNK, BucketEdges.VLLM_V1.itl(), 29);
		assertHistogram(GenAiMeters.TIME_PER_OUTPUT_TOKEN, BucketEdges.VLLM_V1.itl(), 1);
		assertHistogram(GenAiMeters.REQUEST_DURATION, BucketEdges.VLLM_V1.request(), 1);
		assertThat(receiver.metrics()).as("only the GenAI names go over OTLP")
			.allSatisfy((m) -> assertThat(m.item().getName()).startsWith("gen_ai."));
		assertThat(PrometheusText.scrape(this.managementPort).text())
			.as("the Prometheus exposition is unchanged: no GenAI names")
			.doesNotContain("gen_ai");
	}

	private void assertHistogram(String name, double[] edges, long count) {
		Metric metric = receiver
			.awaitMetric((m) -> m.item().getName().equals(name)
					&& m.item().getHistogram().getDataPointsList().stream().anyMatch((p) -> p.getCount() >= count),
					WAIT)
			.item();
		assertThat(metric.getUnit()).isEqualTo("s");
		HistogramDataPoint point = metric.getHistogram()
			.getDataPointsList()
			.stream()
			.filter((p) -> p.getCount() >= count)
			.findFirst()
			.orElseThrow();
		assertThat(point.getExplicitBoundsList()).containsExactly(box(edges));
		assertThat(point.getCount()).isEqualTo(count);
		assertThat(OtlpReceiver.plain(point.getAttributesList())).containsEntry("gen_ai.operation.name", "chat")
			.containsEntry("gen_ai.provider.name", "vllm")
			.containsEntry("gen_ai.request.model", "sim-llama-3-8b")
			.doesNotContainKey("error.type");
	}

	private static Double[] box(double[] values) {
		Double[] boxed = new Double[values.length];
		for (int i = 0; i < values.length; i++) {
			boxed[i] = values[i];
		}
		return boxed;
	}

}
