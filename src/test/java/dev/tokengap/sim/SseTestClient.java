package dev.tokengap.sim;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.ByteBufFlux;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.client.HttpClientForm;
import reactor.netty.http.client.HttpClientResponse;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A loopback HTTP client for the simulator's tests: splits a response into SSE events as
 * they arrive, stamping each with the time its last byte was read. One new connection per
 * request, so a cancel closes the connection as a browser would.
 */
final class SseTestClient {

	static final JsonMapper JSON = JsonMapper.builder().build();

	private static final Duration TIMEOUT = Duration.ofSeconds(20);

	private final HttpClient client;

	SseTestClient(SimulatorServer server) {
		this.client = HttpClient.newConnection().baseUrl(server.baseUrl());
	}

	/** One SSE event: its text without the blank line, and when it was read. */
	record Event(long nanos, String raw) {

		String data() {
			int data = this.raw.indexOf("data: ");
			return (data >= 0) ? this.raw.substring(data + 6) : this.raw;
		}

		/** The {@code event:} field, or {@code null} for a {@code data:}-only event. */
		String type() {
			return this.raw.startsWith("event: ") ? this.raw.substring(7, this.raw.indexOf('\n')) : null;
		}

		boolean done() {
			return "[DONE]".equals(data());
		}

		JsonNode json() {
			return JSON.readTree(data());
		}

		String content() {
			JsonNode choice = json().path("choices").path(0);
			JsonNode delta = choice.path("delta").path("content");
			return delta.isString() ? delta.stringValue() : choice.path("text").asString("");
		}

	}

	/**
	 * A whole exchange: status, headers, every event, the raw body, and the error that
	 * ended it, if any.
	 */
	record Exchange(int status, HttpHeaders headers, long startNanos, long headersNanos, List<Event> events,
			String body, Throwable error) {

		JsonNode json() {
			return JSON.readTree(this.body);
		}

		/**
		 * Events that carry generated text: not the prelude, the usage chunk or [DONE].
		 */
		List<Event> contentEvents() {
			return this.events.stream().filter((event) -> !event.done() && !event.content().isEmpty()).toList();
		}

	}

	Exchange post(String path, String body) {
		return exchange(HttpMethod.POST, path, body, Map.of());
	}

	Exchange post(String path, String body, Map<String, String> headers) {
		return exchange(HttpMethod.POST, path, body, headers);
	}

	Exchange get(String path) {
		return exchange(HttpMethod.GET, path, null, Map.of());
	}

	Exchange delete(String path) {
		return exchange(HttpMethod.DELETE, path, null, Map.of());
	}

	/** A {@code multipart/form-data} POST, as the audio endpoints take. */
	Exchange postForm(String path, Consumer<HttpClientForm> form, Map<String, String> headers) {
		HttpClient.ResponseReceiver<?> sender = this.client.headers((h) -> headers.forEach(h::set))
			.post()
			.uri(path)
			.sendForm((request, f) -> form.accept(f.multipart(true)));
		return exchange(sender);
	}

	Exchange exchange(HttpMethod method, String path, String body, Map<String, String> headers) {
		return exchange(request(method, path, body, headers));
	}

	private Exchange exchange(HttpClient.ResponseReceiver<?> receiver) {
		Recorder recorder = new Recorder();
		Throwable error = null;
		try {
			receiver
				.response((response, content) -> recorder.record(response, content.asString(StandardCharsets.UTF_8)))
				.blockLast(TIMEOUT);
		}
		catch (RuntimeException ex) {
			error = ex;
		}
		return recorder.exchange(error);
	}

	/**
	 * The events of a streamed response as they arrive; cancelling closes the connection.
	 */
	Flux<Event> stream(String path, String body, Map<String, String> headers) {
		return request(HttpMethod.POST, path, body, headers).response((response, content) -> {
			EventSplitter splitter = new EventSplitter();
			return content.asString(StandardCharsets.UTF_8).concatMapIterable(splitter::feed);
		});
	}

	private HttpClient.ResponseReceiver<?> request(HttpMethod method, String path, String body,
			Map<String, String> headers) {
		HttpClient withHeaders = this.client.headers((h) -> {
			headers.forEach(h::set);
			if (body != null) {
				h.set("Content-Type", "application/json");
			}
		});
		HttpClient.RequestSender sender = withHeaders.request(method).uri(path);
		return (body != null) ? sender.send(ByteBufFlux.fromString(Mono.just(body))) : sender;
	}

	static String chatBody(String content, int maxTokens, boolean stream, String extra) {
		return "{\"model\":\"sim-llama-3-8b\",\"messages\":[{\"role\":\"user\",\"content\":" + OpenAiJson.quote(content)
				+ "}],\"max_tokens\":" + maxTokens + ",\"stream\":" + stream + extra + "}";
	}

	static String chatBody(String content, int maxTokens) {
		return chatBody(content, maxTokens, true, "");
	}

	private static final class EventSplitter {

		private final StringBuilder pending = new StringBuilder();

		List<Event> feed(String chunk) {
			long now = System.nanoTime();
			this.pending.append(chunk);
			List<Event> events = new ArrayList<>(2);
			int end;
			while ((end = this.pending.indexOf("\n\n")) >= 0) {
				events.add(new Event(now, this.pending.substring(0, end)));
				this.pending.delete(0, end + 2);
			}
			return events;
		}

	}

	private static final class Recorder {

		private final long startNanos = System.nanoTime();

		private final EventSplitter splitter = new EventSplitter();

		private final List<Event> events = Collections.synchronizedList(new ArrayList<>());

		private final StringBuffer body = new StringBuffer();

		private volatile HttpClientResponse response;

		private volatile long headersNanos;

		Flux<String> record(HttpClientResponse response, Flux<String> content) {
			this.headersNanos = System.nanoTime();
			this.response = response;
			return content.doOnNext((chunk) -> {
				this.body.append(chunk);
				this.events.addAll(this.splitter.feed(chunk));
			});
		}

		Exchange exchange(Throwable error) {
			HttpClientResponse received = this.response;
			return new Exchange((received != null) ? received.status().code() : -1,
					(received != null) ? received.responseHeaders() : null, this.startNanos, this.headersNanos,
					List.copyOf(this.events), this.body.toString(), error);
		}

	}

}
