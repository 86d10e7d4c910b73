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
 * Streamed requests (chat completions, responses, messages) and scrapes over real HTTP, from the host
 * to a container's mapped port.
 */
final class SseRequests {

	static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	private SseRequests() {
	}

	/** Streams one chat completion and returns its {@code data:} lines, in order. */
	static List<String> chat(String baseUrl, int maxTokens, String prompt, String... headers) throws IOException {
		return stream(baseUrl, "/v1/chat/completions", chatBody(TokengapImage.MODEL, maxTokens, prompt), headers)
			.stream()
			.filter((line) -> line.startsWith("data:"))
			.toList();
	}

	/** Streams one {@code /v1/responses} request and returns its {@code event:} and {@code data:} lines. */
	static List<String> responses(String baseUrl, int maxTokens, String prompt) throws IOException {
		return stream(baseUrl, "/v1/responses", "{\"model\":\"" + TokengapImage.MODEL + "\",\"stream\":true,"
				+ "\"max_output_tokens\":" + maxTokens + ",\"input\":\"" + prompt + "\"}");
	}

	/** Streams one Anthropic-style {@code /v1/messages} request and returns its SSE lines. */
	static List<String> messages(String baseUrl, int maxTokens, String prompt) throws IOException {
		return stream(baseUrl, "/v1/messages", "{\"model\":\"" + TokengapImage.MODEL + "\",\"stream\":true,"
				+ "\"max_tokens\":" + maxTokens + ",\"messages\":[{\"role\":\"user\",\"content\":\"" + prompt
				+ "\"}]}");
	}

	/** A streamed chat completion's body. */
	static String chatBody(String model, int maxTokens, String prompt) {
		return "{\"model\":\"" + model + "\",\"stream\":true,\"max_tokens\":" + maxTokens
				+ ",\"messages\":[{\"role\":\"user\",\"content\":\"" + prompt + "\"}]}";
	}

	/** Streams one request that must be answered 200 and returns its {@code event:} and {@code data:} lines. */
	static List<String> stream(String baseUrl, String path, String body, String... headers) throws IOException {
		HttpResponse<Stream<String>> response = send(baseUrl, path, body, HttpResponse.BodyHandlers.ofLines(),
				headers);
		try (Stream<String> lines = response.body()) {
			if (response.statusCode() != 200) {
				throw new IOException(path + " answered status " + response.statusCode());
			}
			return lines.filter((line) -> line.startsWith("data:") || line.startsWith("event:")).toList();
		}
	}

	/** Sends one request (one the engine or tokengap should refuse) and returns the status it got. */
	static int status(String baseUrl, String path, String body) throws IOException {
		return send(baseUrl, path, body, HttpResponse.BodyHandlers.discarding()).statusCode();
	}

	private static <T> HttpResponse<T> send(String baseUrl, String path, String body,
			HttpResponse.BodyHandler<T> handler, String... headers) throws IOException {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(baseUrl + path))
			.timeout(Duration.ofSeconds(120))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(body));
		for (int i = 0; i < headers.length; i += 2) {
			request.header(headers[i], headers[i + 1]);
		}
		try {
			return HTTP.send(request.build(), handler);
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
