package dev.tokengap.proxy;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;

import dev.tokengap.testsupport.PrometheusText;
import dev.tokengap.testsupport.StreamingClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code tokengap_model_info} joins tokengap's {@code model_name} (what clients asked
 * for: an alias, a LoRA adapter) to the name the engine labels its own series with.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=0", "tokengap.mode=demo", "tokengap.demo.load=false",
				"tokengap.sim.step-fixed-cost=5ms", "tokengap.sim.aliases=llama-alias",
				"tokengap.sim.lora-adapters=sql-lora,chat-lora", "tokengap.metrics.max-models=3" })
class ModelInfoIntegrationTests {

	@LocalManagementPort
	int managementPort;

	@LocalServerPort
	int port;

	@Test
	void mapsAliasesAndAdaptersToTheEnginesModelNameWithinTheModelCap() {
		await().atMost(Duration.ofSeconds(10))
			.until(() -> !PrometheusText.scrape(this.managementPort).matching("tokengap_model_info").isEmpty());
		PrometheusText metrics = PrometheusText.scrape(this.managementPort);
		assertThat(metrics.value("tokengap_model_info", "model_name", "sim-llama-3-8b", "engine_model_name",
				"sim-llama-3-8b"))
			.isEqualTo(1);
		assertThat(metrics.value("tokengap_model_info", "model_name", "llama-alias", "engine_model_name",
				"sim-llama-3-8b"))
			.isEqualTo(1);
		assertThat(
				metrics.value("tokengap_model_info", "model_name", "sql-lora", "engine_model_name", "sim-llama-3-8b"))
			.isEqualTo(1);
		assertThat(metrics.matching("tokengap_model_info")).as("max-models caps it too").hasSize(3);
	}

	@Test
	void aStreamForAnAdapterCarriesTheAdaptersNameWhichTheInfoJoinsToTheEngines() {
		StreamingClient.Recording recording = StreamingClient.record(
				"http://127.0.0.1:" + this.port + "/v1/chat/completions",
				"{\"model\":\"sql-lora\",\"stream\":true,\"max_tokens\":8,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
		assertThat(recording.status()).isEqualTo(200);
		assertThat(recording.text()).endsWith("data: [DONE]\n\n");
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(PrometheusText.scrape(this.managementPort)
				.value("tokengap_streams_total", "model_name", "sql-lora", "outcome", "completed")).isEqualTo(1));
	}

}
