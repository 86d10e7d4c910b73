package dev.tokengap.proxy;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.netty.Connection;

import org.springframework.boot.test.context.SpringBootTest;

import dev.tokengap.testsupport.PrometheusText;
import dev.tokengap.testsupport.ScriptedUpstream;
import dev.tokengap.testsupport.StreamingClient;
import dev.tokengap.testsupport.StreamingClient.Recording;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Upstream failures after the response started: the client's stream ends as a failure (no
 * terminating chunk), the outcome is counted, and nothing is made up.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=0", "tokengap.upstream.idle-timeout=500ms",
				"tokengap.metrics.models=m-reset,m-idle,m-nodone" })
class UpstreamFaultIntegrationTests extends ScriptedUpstreamTests {

	@Test
	void aResetMidStreamEndsTheClientStreamAsAFailure() {
		upstream.handle((req, res) -> {
			res.header("content-type", "text/event-stream");
			return res.then()
				.then(ScriptedUpstream.write(res, chunk("one").getBytes()))
				.then(Mono.delay(Duration.ofMillis(50)))
				.then(Mono.fromRunnable(() -> ((Connection) res).channel().close()));
		});
		Recording recording = post("m-reset");
		assertThat(recording.status()).isEqualTo(200);
		assertThat(recording.text()).contains("one").doesNotContain("[DONE]");
		assertThat(recording.failure()).as("the client saw an incomplete body").isNotNull();
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(metrics().value("tokengap_streams_total", "model_name", "m-reset",
					"outcome", "upstream_error")).isEqualTo(1));
	}

	@Test
	void anUpstreamSilentPastTheIdleTimeoutEndsTheStreamAsATimeout() {
		upstream.handle((req, res) -> {
			res.header("content-type", "text/event-stream");
			return res.then()
				.then(ScriptedUpstream.write(res, chunk("one").getBytes()))
				.then(Mono.delay(Duration.ofSeconds(5)))
				.then();
		});
		long start = System.nanoTime();
		Recording recording = post("m-idle");
		Duration took = Duration.ofNanos(System.nanoTime() - start);
		assertThat(recording.text()).contains("one").doesNotContain("[DONE]");
		assertThat(recording.failure()).isNotNull();
		assertThat(took).isLessThan(Duration.ofSeconds(3));
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(metrics().value("tokengap_streams_total", "model_name", "m-idle",
					"outcome", "upstream_timeout")).isEqualTo(1));
	}

	@Test
	void anUpstreamThatEndsItsBodyWithoutDoneIsPassedOnAsItIs() {
		upstream.stream(ScriptedUpstream.Step.list(ScriptedUpstream.Step.of(0, chunk("one"))));
		Recording recording = post("m-nodone");
		assertThat(recording.text()).isEqualTo(chunk("one"));
		assertThat(recording.failure()).as("the HTTP body itself ended cleanly").isNull();
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(metrics().value("tokengap_streams_total", "model_name", "m-nodone",
					"outcome", "completed")).isEqualTo(1));
	}

	static String chunk(String text) {
		return "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + text + "\"}}]}\n\n";
	}

	private PrometheusText metrics() {
		return Scrapes.prometheus(this.managementPort);
	}

	private Recording post(String model) {
		return StreamingClient.post("http://127.0.0.1:" + this.port + "/v1/chat/completions",
				"{\"model\":\"" + model + "\",\"stream\":true}");
	}

}
