package dev.tokengap.proxy;

import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.tokengap.testsupport.PrometheusText;
import dev.tokengap.testsupport.StreamingClient;
import dev.tokengap.testsupport.StreamingClient.Recording;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A dead engine: every request gets a 502 in vLLM's error shape, fast.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = { "management.server.port=0" })
class UpstreamDownIntegrationTests {

	@LocalServerPort
	int port;

	@LocalManagementPort
	int managementPort;

	@DynamicPropertySource
	static void deadUpstream(DynamicPropertyRegistry registry) throws IOException {
		int free;
		try (ServerSocket socket = new ServerSocket(0)) {
			free = socket.getLocalPort();
		}
		registry.add("tokengap.upstream.url", () -> "http://127.0.0.1:" + free);
	}

	@Test
	void answersBadGatewayWhenTheEngineRefusesConnections() {
		Recording recording = StreamingClient.record("http://127.0.0.1:" + this.port + "/v1/chat/completions",
				"{\"model\":\"m\",\"stream\":true}");
		assertThat(recording.status()).isEqualTo(502);
		assertThat(recording.headers().get("content-type")).isEqualTo("application/json");
		assertThat(recording.headers().get("x-request-id")).isNotBlank();
		assertThat(recording.text()).startsWith("{\"error\":{\"message\":\"The engine at http://127.0.0.1:")
			.contains("\"type\":\"BadGatewayError\"", "\"param\":null", "\"code\":502");
		assertThat(PrometheusText.scrape(this.managementPort)
			.value("tokengap_requests_total", "endpoint", "chat_completions", "status", "502")).isEqualTo(1);
		// It asked to stream: tokengap's own 502 is a stream that failed (contract v2).
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(PrometheusText.scrape(this.managementPort)
				.value("tokengap_streams_total", "endpoint", "chat_completions", "outcome", "upstream_error"))
				.isEqualTo(1));
	}

}
