package dev.tokengap.proxy;

import java.time.Duration;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.tokengap.testsupport.StreamingClient;
import dev.tokengap.testsupport.StreamingClient.Recording;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An engine behind TLS whose self-signed certificate nothing trusts (no
 * {@code tokengap.upstream.ssl-bundle}, so the JVM's default trust store): the request is
 * a 502 that names the engine and the handshake's failure, never a silent retry in plain
 * text.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=0", "tokengap.metrics.models=m-tls" })
class UpstreamTlsUntrustedIntegrationTests {

	private static final TlsEngine ENGINE = TlsEngine.start();

	@LocalServerPort
	private int port;

	@DynamicPropertySource
	static void engine(DynamicPropertyRegistry registry) {
		registry.add("tokengap.upstream.url", () -> "https://localhost:" + ENGINE.server().port());
	}

	@AfterAll
	static void stopEngine() {
		ENGINE.server().disposeNow(Duration.ofSeconds(5));
	}

	@Test
	void anEngineWhoseCertificateNothingTrustsIsA502ThatSaysSo() {
		Recording answer = StreamingClient.record("http://127.0.0.1:" + this.port + "/v1/chat/completions",
				"{\"model\":\"m-tls\"}");
		assertThat(answer.status()).isEqualTo(502);
		assertThat(answer.text()).contains("BadGatewayError", "localhost:" + ENGINE.server().port(),
				"SSLHandshakeException");
	}

}
