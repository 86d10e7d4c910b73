package dev.tokengap.tracing;

import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.tokengap.testsupport.PrometheusText;
import dev.tokengap.testsupport.StreamingClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A collector that is down costs the spans it misses, counted in
 * {@code tokengap_spans_dropped_total}; the streams are unaffected.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = { "management.server.port=0",
		"tokengap.mode=demo", "tokengap.demo.load=false", "tokengap.sim.step-fixed-cost=5ms" })
class CollectorDownIntegrationTests {

	@LocalServerPort
	int port;

	@LocalManagementPort
	int managementPort;

	@DynamicPropertySource
	static void endpoint(DynamicPropertyRegistry registry) throws IOException {
		int closed;
		try (ServerSocket socket = new ServerSocket(0)) {
			closed = socket.getLocalPort();
		}
		registry.add("management.opentelemetry.tracing.export.otlp.endpoint",
				() -> "http://127.0.0.1:" + closed + "/v1/traces");
	}

	@Test
	void spansACollectorThatIsDownMissedAreCountedAndStreamsAreUnaffected() {
		for (int i = 0; i < 3; i++) {
			StreamingClient.Exchange exchange = StreamingClient.at("http://127.0.0.1:" + this.port)
				.post("/v1/chat/completions",
						"{\"model\":\"sim-llama-3-8b\",\"stream\":true,\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}",
						Map.of());
			assertThat(exchange.status()).isEqualTo(200);
			assertThat(exchange.contentEvents()).hasSize(5);
		}
		await().atMost(Duration.ofSeconds(30))
			.untilAsserted(() -> assertThat(PrometheusText.scrape(this.managementPort)
				.value("tokengap_spans_dropped_total", "reason", "export_failed")).isGreaterThanOrEqualTo(3));
		assertThat(PrometheusText.scrape(this.managementPort)
			.value("tokengap_spans_dropped_total", "reason", "queue_full")).isZero();
	}

}
