package dev.tokengap.attribution;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * Reads tokengap's management endpoints over real HTTP.
 */
final class Scrapes {

	private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	private Scrapes() {
	}

	static String text(int managementPort) {
		return get(managementPort, "/actuator/prometheus");
	}

	static String get(int managementPort, String path) {
		try {
			HttpResponse<String> response = HTTP.send(
					HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + managementPort + path))
						.timeout(Duration.ofSeconds(10))
						.build(),
					HttpResponse.BodyHandlers.ofString());
			if (response.statusCode() != 200) {
				throw new AssertionError(path + " answered " + response.statusCode() + ": " + response.body());
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

}
