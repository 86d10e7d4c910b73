package dev.tokengap.proxy;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

import dev.tokengap.testsupport.RawHttpClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A client that never finishes its request (slow-loris) is disconnected after
 * {@code tokengap.proxy.request-timeout}.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = { "management.server.port=0",
		"tokengap.mode=demo", "tokengap.demo.load=false", "tokengap.proxy.request-timeout=1s" })
class SlowClientIntegrationTests {

	@LocalServerPort
	int port;

	@Test
	void disconnectsAClientThatTricklesItsHeaders() {
		try (RawHttpClient client = RawHttpClient.connect(this.port, 0)) {
			client.send("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n");
			long start = System.nanoTime();
			// Keep trickling a header byte now and then until the server gives up on us.
			while (client.readWithin(Duration.ofMillis(200)) == 0) {
				client.send("X");
			}
			Duration took = Duration.ofNanos(System.nanoTime() - start);
			assertThat(took).isLessThan(Duration.ofSeconds(5));
			if (!client.received().isEmpty()) {
				assertThat(client.received()).startsWith("HTTP/1.1 408");
			}
		}
	}

}
