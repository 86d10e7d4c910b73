package dev.tokengap.proxy;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import dev.tokengap.testsupport.PrometheusText;

/**
 * Reads tokengap's real {@code /actuator/prometheus} over HTTP.
 */
final class Scrapes {

	private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	private Scrapes() {
	}

	static String text(int managementPort) {
		try {
			HttpRequest request = HttpRequest
				.newBuilder(URI.create("http://127.0.0.1:" + managementPort + "/actuator/prometheus"))
				.header("Accept", "text/plain;version=0.0.4")
				.timeout(Duration.ofSeconds(10))
				.build();
			HttpResponse<String> response = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
			if (response.statusCode() != 200) {
				throw new AssertionError("scrape answered " + response.statusCode() + ": " + response.body());
			}
			return response.body();
		}
		catch (java.io.IOException ex) {
			throw new java.io.UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	static PrometheusText prometheus(int managementPort) {
		return new PrometheusText(text(managementPort));
	}

}
