package dev.tokengap.deploy;

import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import dev.tokengap.testsupport.StreamingClient;

/**
 * Streamed requests (chat completions, responses, messages) from the host to a
 * container's mapped port, on the tests' {@link StreamingClient}.
 */
final class SseRequests {

	private static final Duration TIMEOUT = Duration.ofSeconds(120);

	private SseRequests() {
	}

	/** Streams one chat completion and returns its {@code data:} lines, in order. */
	static List<String> chat(String baseUrl, int maxTokens, String prompt, String... headers) throws IOException {
		return stream(baseUrl, "/v1/chat/completions", chatBody(TokengapImage.MODEL, maxTokens, prompt), headers)
			.stream()
			.filter((line) -> line.startsWith("data:"))
			.toList();
	}

	/**
	 * Streams one {@code /v1/responses} request and returns its {@code event:} and
	 * {@code data:} lines.
	 */
	static List<String> responses(String baseUrl, int maxTokens, String prompt) throws IOException {
		return stream(baseUrl, "/v1/responses", "{\"model\":\"" + TokengapImage.MODEL + "\",\"stream\":true,"
				+ "\"max_output_tokens\":" + maxTokens + ",\"input\":\"" + prompt + "\"}");
	}

	/**
	 * Streams one Anthropic-style {@code /v1/messages} request and returns its SSE lines.
	 */
	static List<String> messages(String baseUrl, int maxTokens, String prompt) throws IOException {
		return stream(baseUrl, "/v1/messages",
				"{\"model\":\"" + TokengapImage.MODEL + "\",\"stream\":true," + "\"max_tokens\":" + maxTokens
						+ ",\"messages\":[{\"role\":\"user\",\"content\":\"" + prompt + "\"}]}");
	}

	/** A streamed chat completion's body. */
	/**
	 * Streams a chat request that asks for the final usage chunk, as the OpenAI SDKs'
	 * {@code stream_options} do: the engine's per-request metrics come on it.
	 */
	static List<String> chatWithUsage(String baseUrl, int maxTokens, String prompt) throws IOException {
		String body = "{\"model\":\"" + TokengapImage.MODEL + "\",\"stream\":true,\"max_tokens\":" + maxTokens
				+ ",\"stream_options\":{\"include_usage\":true},\"messages\":[{\"role\":\"user\",\"content\":\""
				+ prompt + "\"}]}";
		return stream(baseUrl, "/v1/chat/completions", body).stream()
			.filter((line) -> line.startsWith("data:"))
			.toList();
	}

	static String chatBody(String model, int maxTokens, String prompt) {
		return "{\"model\":\"" + model + "\",\"stream\":true,\"max_tokens\":" + maxTokens
				+ ",\"messages\":[{\"role\":\"user\",\"content\":\"" + prompt + "\"}]}";
	}

	/**
	 * Streams one request that must be answered 200 and returns its {@code event:} and
	 * {@code data:} lines.
	 */
	static List<String> stream(String baseUrl, String path, String body, String... headers) throws IOException {
		StreamingClient.Exchange exchange = send(baseUrl, path, body, headers);
		if (exchange.status() != 200) {
			throw new IOException(path + " answered status " + exchange.status());
		}
		if (exchange.error() != null) {
			throw new IOException(path + " was cut", exchange.error());
		}
		return exchange.body().lines().filter((line) -> line.startsWith("data:") || line.startsWith("event:")).toList();
	}

	/**
	 * Sends one request (one the engine or tokengap should refuse) and returns the status
	 * it got.
	 */
	static int status(String baseUrl, String path, String body) throws IOException {
		return send(baseUrl, path, body).status();
	}

	private static StreamingClient.Exchange send(String baseUrl, String path, String body, String... headers)
			throws IOException {
		Map<String, String> named = new HashMap<>();
		for (int i = 0; i < headers.length; i += 2) {
			named.put(headers[i], headers[i + 1]);
		}
		StreamingClient.Exchange exchange = StreamingClient.at(baseUrl, TIMEOUT).post(path, body, named);
		if (exchange.status() < 0) {
			throw new IOException(path + " got no response", exchange.error());
		}
		return exchange;
	}

}
