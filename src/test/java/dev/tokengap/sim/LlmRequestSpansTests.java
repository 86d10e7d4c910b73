package dev.tokengap.sim;

import java.net.URI;
import java.time.Duration;
import java.util.Map;

import io.opentelemetry.proto.trace.v1.Span;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import dev.tokengap.testsupport.OtlpReceiver;
import dev.tokengap.testsupport.OtlpReceiver.Received;
import dev.tokengap.testsupport.StreamingClient;

import static dev.tokengap.sim.FastSimulator.CHAT;
import static dev.tokengap.sim.FastSimulator.MESSAGES;
import static dev.tokengap.sim.FastSimulator.chatBody;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * The simulator's own trace ({@code tokengap.sim.otlp-traces-endpoint}) over real HTTP
 * into a real OTLP/HTTP receiver: one {@code llm_request} server span per request, child
 * of its {@code traceparent}, with vLLM's attributes, its times the engine's.
 */
class LlmRequestSpansTests {

	private static final Duration WAIT = Duration.ofSeconds(20);

	private static final String TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";

	private static OtlpReceiver receiver;

	private static SimulatorServer server;

	private static StreamingClient client;

	@BeforeAll
	static void start() {
		receiver = OtlpReceiver.start();
		server = FastSimulator
			.start(FastSimulator.properties().otlpTracesEndpoint(URI.create(receiver.tracesUrl())).build());
		client = FastSimulator.client(server);
	}

	@AfterAll
	static void stop() {
		server.close();
		receiver.close();
	}

	@Test
	void aStreamedRequestIsExportedAsAChildOfItsTraceparentWithVllmsAttributes() {
		String parent = "00f067aa0ba902b7";
		StreamingClient.Exchange exchange = client.post(CHAT, chatBody("trace me", 6, true, ""),
				Map.of("traceparent", "00-" + TRACE_ID + "-" + parent + "-01", "X-Request-Id", "traced-1"));
		assertThat(exchange.status()).isEqualTo(200);
		Received<Span> received = receiver.awaitSpan((s) -> s.item().getName().equals("llm_request")
				&& OtlpReceiver.hex(s.item().getTraceId()).equals(TRACE_ID), WAIT);
		Span span = received.item();
		assertThat(received.serviceName()).isEqualTo(LlmRequestSpans.SERVICE_NAME);
		assertThat(OtlpReceiver.hex(span.getParentSpanId())).isEqualTo(parent);
		assertThat(span.getKind()).isEqualTo(Span.SpanKind.SPAN_KIND_SERVER);
		Map<String, Object> attributes = OtlpReceiver.plain(span.getAttributesList());
		assertThat(attributes).containsEntry("gen_ai.request.id", "traced-1")
			.containsEntry("gen_ai.response.model", server.engine().properties().model())
			.containsEntry("gen_ai.usage.completion_tokens", 6L)
			.containsEntry("gen_ai.request.max_tokens", 6L)
			.containsEntry("gen_ai.request.n", 1L)
			.containsKeys("gen_ai.usage.prompt_tokens", "gen_ai.latency.time_in_queue",
					"gen_ai.latency.time_to_first_token", "gen_ai.latency.e2e", "gen_ai.latency.time_in_model_prefill",
					"gen_ai.latency.time_in_model_decode", "gen_ai.latency.time_in_model_inference");
		double e2e = (double) attributes.get("gen_ai.latency.e2e");
		double ttft = (double) attributes.get("gen_ai.latency.time_to_first_token");
		double queue = (double) attributes.get("gen_ai.latency.time_in_queue");
		double prefill = (double) attributes.get("gen_ai.latency.time_in_model_prefill");
		double decode = (double) attributes.get("gen_ai.latency.time_in_model_decode");
		assertThat(e2e).isPositive().isGreaterThanOrEqualTo(ttft);
		assertThat(queue + prefill).isCloseTo(ttft, within(1e-6));
		assertThat(ttft + decode).isCloseTo(e2e, within(1e-6));
		double spanSeconds = (span.getEndTimeUnixNano() - span.getStartTimeUnixNano()) / 1e9;
		assertThat(spanSeconds).isCloseTo(e2e, within(1e-3));
		assertThat(attributes.keySet()).noneMatch((key) -> key.contains("prompt") && !key.endsWith("_tokens"));
	}

	@Test
	void aRequestWithoutTraceparentStartsATraceOfItsOwn() {
		assertThat(client
			.post(MESSAGES,
					"{\"model\":\"" + server.engine().properties().model()
							+ "\",\"max_tokens\":3,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}",
					Map.of("X-Request-Id", "untraced-1"))
			.status()).isEqualTo(200);
		Span span = receiver
			.awaitSpan((s) -> OtlpReceiver.plain(s.item().getAttributesList())
				.getOrDefault("gen_ai.request.id", "")
				.equals("untraced-1"), WAIT)
			.item();
		assertThat(span.getParentSpanId().isEmpty()).isTrue();
		assertThat(span.getTraceId().size()).isEqualTo(16);
	}

	@Test
	void anUnsampledParentIsNotExported() {
		client.post(CHAT, chatBody("not sampled", 3, true, ""), Map.of("traceparent",
				"00-" + "1".repeat(32) + "-" + "2".repeat(16) + "-00", "X-Request-Id", "unsampled"));
		client.post(CHAT, chatBody("after", 3, true, ""), Map.of("X-Request-Id", "after-unsampled"));
		receiver.awaitSpan((s) -> OtlpReceiver.plain(s.item().getAttributesList())
			.getOrDefault("gen_ai.request.id", "")
			.equals("after-unsampled"), WAIT);
		assertThat(receiver.spans()).noneMatch((s) -> OtlpReceiver.hex(s.item().getTraceId()).equals("1".repeat(32)));
	}

	@Test
	void withoutAnEndpointNothingIsTraced() {
		assertThat(LlmRequestSpans.of(null)).isSameAs(LlmRequestSpans.NONE);
		assertThat(LlmRequestSpans.NONE.enabled()).isFalse();
		assertThat(SimulatorProperties.defaults().otlpTracesEndpoint()).isNull();
	}

}
