package dev.tokengap.proxy;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;

import dev.tokengap.testsupport.PrometheusText;
import dev.tokengap.testsupport.StreamingClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Time to first token outside the engine, against the simulator sending vLLM's
 * per-request metrics ({@code --enable-per-request-metrics}): a stream whose final usage
 * chunk carries the engine's queue time and TTFT gets one sample of each series; one
 * without (the request says {@code "include_metrics": false}) gets none, never a guess.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=0", "tokengap.mode=demo", "tokengap.demo.load=false",
				"tokengap.sim.step-fixed-cost=5ms", "tokengap.sim.per-request-metrics=true",
				"tokengap.metrics.models=sim-llama-3-8b" })
class OutsideEngineIntegrationTests {

	@LocalServerPort
	int port;

	@LocalManagementPort
	int managementPort;

	@Test
	void aStreamWithTheEnginesFiguresGetsItsOutsideEngineTimeAndOneWithoutGetsNone() {
		stream(true);
		stream(false);
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(
					() -> assertThat(scrape().value("tokengap_streams_total", "outcome", "completed")).isEqualTo(2));
		PrometheusText metrics = scrape();
		assertThat(metrics.value("tokengap_time_to_first_token_seconds_count")).isEqualTo(2);
		assertThat(metrics.value("tokengap_ttft_outside_engine_seconds_count")).isEqualTo(1);
		assertThat(metrics.value("tokengap_engine_queue_time_seconds_count")).isEqualTo(1);
		double outside = metrics.value("tokengap_ttft_outside_engine_seconds_sum");
		double queue = metrics.value("tokengap_engine_queue_time_seconds_sum");
		double ttft = metrics.value("tokengap_time_to_first_token_seconds_sum");
		System.out.printf("TTFT (2 streams) %.1f ms; the reported stream: outside the engine %.1f ms, "
				+ "engine queue %.1f ms%n", ttft * 1e3, outside * 1e3, queue * 1e3);
		assertThat(outside).isGreaterThanOrEqualTo(0).isLessThan(ttft);
		assertThat(queue).isGreaterThanOrEqualTo(0).isLessThan(ttft);
	}

	private void stream(boolean metrics) {
		String body = "{\"model\":\"sim-llama-3-8b\",\"stream\":true,\"max_tokens\":8,"
				+ "\"stream_options\":{\"include_usage\":true}," + (metrics ? "" : "\"include_metrics\":false,")
				+ "\"messages\":[{\"role\":\"user\",\"content\":\"time me\"}]}";
		long events = StreamingClient.at("http://127.0.0.1:" + this.port)
			.stream("/v1/chat/completions", body, Map.of())
			.filter((event) -> !event.done() && !event.content().isEmpty())
			.count()
			.block(Duration.ofSeconds(30));
		assertThat(events).isEqualTo(8);
	}

	private PrometheusText scrape() {
		return PrometheusText.scrape(this.managementPort);
	}

}
