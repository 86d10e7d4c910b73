package dev.tokengap.proxy;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalManagementPort;

import dev.tokengap.testsupport.PrometheusText;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The newcomer's first command: with no upstream URL and no flags, histograms fill at
 * once.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=0", "tokengap.mode=demo" })
class DemoModeIntegrationTests {

	@LocalManagementPort
	int managementPort;

	@Test
	void demoLoadFillsTheHistogramsWithinSeconds() {
		await().atMost(Duration.ofSeconds(30))
			.pollInterval(Duration.ofMillis(500))
			.untilAsserted(() -> assertThat(PrometheusText.scrape(this.managementPort)
				.value("tokengap_streams_total", "model_name", "sim-llama-3-8b", "outcome", "completed"))
				.isGreaterThanOrEqualTo(2));
		assertThat(PrometheusText.scrape(this.managementPort)
			.value("tokengap_inter_token_latency_seconds_count", "model_name", "sim-llama-3-8b")).isGreaterThan(10);
	}

}
