package dev.tokengap.client;

import java.net.URI;
import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class HttpClientsTests {

	/**
	 * Reactor Netty (1.3.6) parses a request's URL as text with a pattern whose port
	 * takes 2 to 5 digits: a base URL carries a one-digit port with a leading zero, the
	 * same port, rather than have {@code 127.0.0.1:9} taken for a host name. Everything
	 * else is the URL's scheme and authority as written.
	 */
	@Test
	void aBaseUrlWritesAOneDigitPortWithTwoDigits() {
		assertThat(HttpClients.baseUrl(URI.create("http://127.0.0.1:9"))).isEqualTo("http://127.0.0.1:09");
		assertThat(HttpClients.baseUrl(URI.create("https://[::1]:7/v1"))).isEqualTo("https://[::1]:07");
		assertThat(HttpClients.baseUrl(URI.create("http://vllm:8000/prefix"))).isEqualTo("http://vllm:8000");
		assertThat(HttpClients.baseUrl(URI.create("http://vllm"))).isEqualTo("http://vllm");
		assertThat(HttpClients.baseUrl(URI.create("http://127.0.0.1:09"))).isEqualTo("http://127.0.0.1:09");
	}

	@Test
	void idleConnectionsAreLookedForFourTimesPerMaxIdleTimeAtMostOnceASecond() {
		assertThat(HttpClients.evictionInterval(Duration.ofSeconds(4))).isEqualTo(Duration.ofSeconds(1));
		assertThat(HttpClients.evictionInterval(Duration.ofSeconds(2))).isEqualTo(Duration.ofMillis(500));
		assertThat(HttpClients.evictionInterval(Duration.ofNanos(7))).isEqualTo(Duration.ofNanos(1));
		assertThat(HttpClients.evictionInterval(Duration.ofMinutes(10))).isEqualTo(Duration.ofSeconds(1));
	}

}
