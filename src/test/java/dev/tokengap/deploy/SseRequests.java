package dev.tokengap.deploy;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;

/**
 * Streamed chat completions and scrapes over real HTTP, from the host to a container's mapped port.
 */
final class SseRequests {

	static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	private SseRequests() {
	}

	/** Streams one chat completion and returns its {@code data:} lines, in order. */
	static List<String> chat(String baseUrl, int maxTokens, String prompt, String... headers) throws IOException {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(baseUrl + "/v1/chat/completions"))
			.timeout(Duration.ofSeconds(120))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"" + TokengapImage.MODEL + "\",\"stream\":true,"
					+ "\"max_tokens\":" + maxTokens + ",\"messages\":[{\"role\":\"user\",\"content\":\"" + prompt
					+ "\"}]}"));
		for (int i = 0; i < headers.length; i += 2) {
			request.header(headers[i], headers[i + 1]);
		}
		try {
			HttpResponse<Stream<String>> response = HTTP.send(request.build(), HttpResponse.BodyHandlers.ofLines());
			if (response.statusCode() != 200) {
				throw new IOException("status " + response.statusCode());
			}
			try (Stream<String> lines = response.body()) {
				return lines.filter((line) -> line.startsWith("data:")).toList();
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IOException(ex);
		}
	}

	static String get(String url) throws IOException {
		try {
			HttpResponse<String> response = HTTP.send(
					HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(20)).build(),
					HttpResponse.BodyHandlers.ofString());
			if (response.statusCode() != 200) {
				throw new IOException(url + " answered " + response.statusCode() + ": " + response.body());
			}
			return response.body();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IOException(ex);
		}
	}

}
