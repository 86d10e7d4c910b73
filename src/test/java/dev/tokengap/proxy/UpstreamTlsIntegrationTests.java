package dev.tokengap.proxy;

import java.time.Duration;

import org.junit.jupiter.api.AfterAll;
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
 * An engine behind TLS with a self-signed certificate the test makes with the JDK's
 * {@code keytool}: tokengap reaches it through {@code tokengap.upstream.ssl-bundle}, a
 * Spring Boot PEM bundle that trusts that certificate, and verifies the engine's host
 * name against it ({@link UpstreamTlsUntrustedIntegrationTests}: trusted by nothing, it
 * is a 502 that says why).
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = { "management.server.port=0",
		"tokengap.upstream.ssl-bundle=engine", "tokengap.metrics.models=m-tls" })
class UpstreamTlsIntegrationTests {

	private static final TlsEngine ENGINE = TlsEngine.start();

	@LocalServerPort
	private int port;

	@LocalManagementPort
	private int managementPort;

	@DynamicPropertySource
	static void engine(DynamicPropertyRegistry registry) {
		registry.add("tokengap.upstream.url", () -> "https://localhost:" + ENGINE.server().port());
		registry.add("spring.ssl.bundle.pem.engine.truststore.certificate",
				() -> "file:" + ENGINE.certificate().toAbsolutePath());
	}

	@AfterAll
	static void stopEngine() {
		ENGINE.server().disposeNow(Duration.ofSeconds(5));
	}

	@Test
	void reachesAnEngineBehindTlsTrustedByAnSslBundle() {
		Recording answer = StreamingClient.record("http://127.0.0.1:" + this.port + "/v1/chat/completions",
				"{\"model\":\"m-tls\"}");
		assertThat(answer.status()).isEqualTo(200);
		assertThat(answer.text()).isEqualTo("{\"tls\":true}");
	}

	@Test
	void readsTheEnginesServedModelsOverTheSameTls() {
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(PrometheusText.scrape(this.managementPort)
				.value("tokengap_model_info", "model_name", "served-over-tls")).isEqualTo(1));
	}

}
