package dev.tokengap.proxy;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.test.context.SpringBootTest;

import dev.tokengap.testsupport.PrometheusText;
import dev.tokengap.testsupport.ScriptedUpstream;
import dev.tokengap.testsupport.ScriptedUpstreamTests;
import dev.tokengap.testsupport.StreamingClient;
import dev.tokengap.testsupport.StreamingClient.Recording;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Errors before the response is committed: the engine's own errors pass through
 * untouched; tokengap's are OpenAI-style JSON with the right status.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=0", "tokengap.mode=demo", "tokengap.upstream.response-timeout=500ms",
				"tokengap.proxy.max-request-body=1KB", "tokengap.metrics.models=m-err" })
class ProxyErrorIntegrationTests extends ScriptedUpstreamTests {

	@Test
	void passesAnEngineBadRequestThroughUntouched() {
		String body = "{\"error\":{\"message\":\"max_tokens must be at least 1, got -1.\",\"type\":\"BadRequestError\","
				+ "\"param\":null,\"code\":400}}";
		upstream.respond(400, "application/json", body);
		Recording recording = post("{\"model\":\"m-err\",\"max_tokens\":-1}");
		assertThat(recording.status()).isEqualTo(400);
		assertThat(recording.text()).isEqualTo(body);
		assertThat(recording.headers().get("content-type")).isEqualTo("application/json");
		assertRequestsCounted("m-err", "400");
	}

	@Test
	void passesAnEngineNotFoundThroughUntouched() {
		String body = "{\"error\":{\"message\":\"The model `nope` does not exist.\",\"type\":\"NotFoundError\","
				+ "\"param\":\"model\",\"code\":404}}";
		upstream.respond(404, "application/json", body);
		Recording recording = post("{\"model\":\"nope\",\"messages\":[]}");
		assertThat(recording.status()).isEqualTo(404);
		assertThat(recording.text()).isEqualTo(body);
		assertRequestsCounted("other", "404");
	}

	@Test
	void answersGatewayTimeoutWhenNoHeadersArriveInTime() {
		upstream.handle((req, res) -> Mono.delay(Duration.ofSeconds(3)).then(res.status(200).send().then()));
		Recording recording = post("{\"model\":\"m-err\",\"stream\":true}");
		assertThat(recording.status()).isEqualTo(504);
		assertThat(recording.headers().get("content-type")).isEqualTo("application/json");
		assertThat(recording.text()).startsWith("{\"error\":{\"message\":\"The engine sent no response headers within")
			.contains("\"type\":\"GatewayTimeoutError\"", "\"code\":504");
		// It asked to stream:
		// tokengap's own 504 is a stream that timed out (contract v2).
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(PrometheusText.scrape(this.managementPort)
				.value("tokengap_streams_total", "model_name", "m-err", "outcome", "upstream_timeout")).isEqualTo(1));
	}

	@Test
	void answersPayloadTooLargeForAnOversizeBody() {
		upstream.respond(200, "application/json", "{}");
		Recording recording = post("{\"model\":\"m-err\",\"prompt\":\"" + "a".repeat(2000) + "\"}");
		assertThat(recording.status()).isEqualTo(413);
		assertThat(recording.text()).contains("\"type\":\"RequestEntityTooLargeError\"", "\"code\":413");
		assertThat(upstream.received("/v1/chat/completions")).as("nothing forwarded").isEmpty();
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(PrometheusText.scrape(this.managementPort)
				.value("tokengap_requests_total", "model_name", "unknown", "status", "413")).isEqualTo(1));
	}

	@Test
	void forwardsTheSameBodyBytesAndHeaders() {
		upstream.respond(200, "application/json", "{\"ok\":true}");
		String body = "{ \"model\" : \"m-err\",\n \"stream\": false, \"x\": [1,2,3] }";
		Recording recording = post(body);
		assertThat(recording.status()).isEqualTo(200);
		ScriptedUpstream.Received received = upstream.received("/v1/chat/completions").get(0);
		assertThat(received.body()).isEqualTo(body);
		assertThat(received.uri()).isEqualTo("/v1/chat/completions");
		assertThat(received.headers().get("host")).isEqualTo("127.0.0.1:" + upstream.port());
		assertThat(received.headers().get("x-forwarded-for")).isEqualTo("127.0.0.1");
		assertThat(received.headers().get("x-request-id")).isNotBlank()
			.isEqualTo(recording.headers().get("x-request-id"));
	}

	@Test
	void forwardsAnInvalidJsonBodyWithTheUnknownModelLabel() {
		upstream.respond(400, "application/json", "{\"error\":{\"message\":\"bad json\",\"code\":400}}");
		Recording recording = post("{not json");
		assertThat(recording.status()).isEqualTo(400);
		assertThat(upstream.received("/v1/chat/completions").get(0).body()).isEqualTo("{not json");
		assertRequestsCounted("unknown", "400");
	}

	/**
	 * One request counted with this label and status. It is counted when the exchange
	 * ends, which follows the last byte the client reads, so the scrape may have to wait.
	 */
	private void assertRequestsCounted(String model, String status) {
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(PrometheusText.scrape(this.managementPort)
				.value("tokengap_requests_total", "model_name", model, "status", status)).isEqualTo(1));
	}

	private Recording post(String json) {
		return StreamingClient.record("http://127.0.0.1:" + this.port + "/v1/chat/completions", json);
	}

}
