package dev.tokengap.proxy;

import java.time.Duration;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

import dev.tokengap.metrics.ModelLabels;
import dev.tokengap.testsupport.PrometheusText;
import dev.tokengap.testsupport.ScriptedUpstreamTests;
import dev.tokengap.testsupport.StreamingClient;
import dev.tokengap.testsupport.StreamingClient.Recording;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A failure inside tokengap itself, after the request body was read: an OpenAI-style 500,
 * the request counted, nothing leaked (the body is released although forwarding never
 * began, and an exception without a message still makes a body). The leak check runs at
 * paranoid for every test class.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=0", "tokengap.mode=demo", "tokengap.metrics.max-models=19" })
class ProxyFailureIntegrationTests extends ScriptedUpstreamTests {

	@Autowired
	ModelLabels labels;

	@AfterEach
	void restoreLabels() {
		this.labels.onUnlisted(() -> {
		});
	}

	@Test
	void aFailureBeforeForwardingIsAnswered500WithoutLeakingTheBody() {
		upstream.respond(200, "application/json", "{}");
		// A bug's usual shape: an exception without a message,
		// thrown while the request is routed.
		this.labels.onUnlisted(() -> {
			throw new IllegalStateException();
		});
		for (int i = 0; i < 20; i++) {
			Recording recording = StreamingClient.record("http://127.0.0.1:" + this.port + "/v1/chat/completions",
					"{\"model\":\"m-unlisted\",\"stream\":true,\"padding\":\"" + "x".repeat(4096) + "\"}");
			assertThat(recording.status()).isEqualTo(500);
			assertThat(recording.text()).isEqualTo(
					"{\"error\":{\"message\":\"\",\"type\":\"InternalServerError\",\"param\":null,\"code\":500}}");
		}
		assertThat(upstream.received()).as("nothing was forwarded").isEmpty();
		await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
			PrometheusText metrics = PrometheusText.scrape(this.managementPort);
			assertThat(metrics.value("tokengap_requests_total", "status", "500")).isEqualTo(20);
			// Each asked to stream and failed inside tokengap: a stream, with the outcome
			// of its 500.
			assertThat(metrics.value("tokengap_streams_total", "outcome", "upstream_error")).isEqualTo(20);
		});
	}

}
