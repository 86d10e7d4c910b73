package dev.tokengap.testsupport;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.zip.CRC32;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.ByteBufFlux;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.client.HttpClientForm;
import reactor.netty.http.client.HttpClientResponse;
import reactor.netty.resources.ConnectionProvider;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The streaming (SSE) HTTP client of the tests, on Reactor Netty with a new connection
 * per request, so a cancel closes the connection as a browser would. The static
 * {@link #record} and {@link #digest} record when each body chunk arrived or only the
 * body's digest; a client {@link #at(String) at a base URL} splits a response into SSE
 * events as they arrive, stamping each with the time its last byte was read.
 */
public final class StreamingClient {

	/** A JSON mapper for the bodies and events tests read. */
	public static final JsonMapper JSON = JsonMapper.builder().build();

	private final HttpClient client;

	private final Duration timeout;

	private StreamingClient(String baseUrl, Duration timeout) {
		this.client = HttpClient.newConnection().baseUrl(baseUrl);
		this.timeout = timeout;
	}

	/**
	 * A client of one server whose responses are split into SSE events, each exchange
	 * given 20 seconds.
	 * @param baseUrl the server's base URL, such as {@code http://127.0.0.1:8000}
	 * @return the client
	 */
	public static StreamingClient at(String baseUrl) {
		return at(baseUrl, Duration.ofSeconds(20));
	}

	/**
	 * A client of one server whose responses are split into SSE events.
	 * @param baseUrl the server's base URL
	 * @param timeout how long one exchange may take before it ends with an error
	 * @return the client
	 */
	public static StreamingClient at(String baseUrl, Duration timeout) {
		return new StreamingClient(baseUrl, timeout);
	}

	/**
	 * POSTs a JSON body and records the response.
	 * @param url the full URL
	 * @param json the body
	 * @return the recorded response
	 */
	public static Recording record(String url, String json) {
		List<Chunk> chunks = new ArrayList<>();
		Outcome outcome = send(url, json, (buf) -> chunks.add(new Chunk(System.nanoTime(), ByteBufUtil.getBytes(buf))));
		return new Recording(outcome.status, outcome.headers, chunks, outcome.failure);
	}

	/**
	 * POSTs a JSON body and keeps only the length and CRC32 of the response body, for
	 * bodies too large to record.
	 * @param url the full URL
	 * @param json the body
	 * @return the digest of the response
	 */
	public static Digest digest(String url, String json) {
		CRC32 crc = new CRC32();
		long[] length = new long[1];
		Outcome outcome = send(url, json, (buf) -> {
			length[0] += buf.readableBytes();
			crc.update(buf.nioBuffer());
		});
		return new Digest(outcome.status, length[0], crc.getValue(), outcome.failure);
	}

	private static Outcome send(String url, String json, Consumer<ByteBuf> onChunk) {
		Outcome outcome = new Outcome();
		HttpClient.create(ConnectionProvider.newConnection())
			.headers((h) -> h.set(HttpHeaderNames.CONTENT_TYPE, "application/json"))
			.post()
			.uri(url)
			.send(ByteBufFlux.fromString(Mono.just(json)))
			.response((response, body) -> {
				outcome.status = response.status().code();
				outcome.headers = response.responseHeaders();
				// Nothing is emitted: the buffers stay Reactor Netty's, released after
				// each one.
				return body.handle((buf, sink) -> onChunk.accept(buf));
			})
			.then()
			.onErrorResume((ex) -> {
				outcome.failure = ex;
				return Mono.empty();
			})
			.block(Duration.ofSeconds(60));
		return outcome;
	}

	private static final class Outcome {

		volatile int status;

		volatile HttpHeaders headers;

		volatile Throwable failure;

	}

	/**
	 * A response body's length and CRC32.
	 *
	 * @param failure how the body ended when it did not end cleanly, else null
	 */
	public record Digest(int status, long length, long crc32, Throwable failure) {
	}

	/** One body chunk as it arrived. */
	public record Chunk(long nanos, byte[] bytes) {

		public String text() {
			return new String(this.bytes, StandardCharsets.UTF_8);
		}

	}

	/**
	 * A whole response.
	 *
	 * @param failure how the body ended when it did not end cleanly (an incomplete
	 * chunked body), else null
	 */
	public record Recording(int status, HttpHeaders headers, List<Chunk> chunks, Throwable failure) {

		public byte[] bytes() {
			ByteArrayOutputStream out = new ByteArrayOutputStream();
			this.chunks.forEach((c) -> out.writeBytes(c.bytes()));
			return out.toByteArray();
		}

		public String text() {
			return new String(bytes(), StandardCharsets.UTF_8);
		}

		/**
		 * Arrival time of the chunk that completed the first occurrence of
		 * {@code marker}.
		 */
		public long arrivalOf(String marker) {
			StringBuilder seen = new StringBuilder();
			for (Chunk chunk : this.chunks) {
				seen.append(chunk.text());
				if (seen.indexOf(marker) >= 0) {
					return chunk.nanos();
				}
			}
			throw new AssertionError("marker never arrived; received " + seen.length() + " chars: "
					+ seen.substring(0, Math.min(300, seen.length())));
		}

	}

	/** One SSE event: its text without the blank line, and when it was read. */
	public record Event(long nanos, String raw) {

		public String data() {
			int data = this.raw.indexOf("data: ");
			return (data >= 0) ? this.raw.substring(data + 6) : this.raw;
		}

		/** The {@code event:} field, or {@code null} for a {@code data:}-only event. */
		public String type() {
			return this.raw.startsWith("event: ") ? this.raw.substring(7, this.raw.indexOf('\n')) : null;
		}

		public boolean done() {
			return "[DONE]".equals(data());
		}

		public JsonNode json() {
			return JSON.readTree(data());
		}

		public String content() {
			JsonNode choice = json().path("choices").path(0);
			JsonNode delta = choice.path("delta").path("content");
			return delta.isString() ? delta.stringValue() : choice.path("text").asString("");
		}

	}

	/**
	 * A whole exchange: status, headers, every event, the raw body, and the error that
	 * ended it, if any.
	 */
	public record Exchange(int status, HttpHeaders headers, long startNanos, long headersNanos, List<Event> events,
			String body, Throwable error) {

		public JsonNode json() {
			return JSON.readTree(this.body);
		}

		/**
		 * This exchange, once checked to have ended cleanly, as a client that throws on a
		 * broken or late response would have it.
		 * @return this exchange
		 * @throws AssertionError when it ended with an error or ran out of time
		 */
		public Exchange whole() {
			if (this.error != null) {
				throw new AssertionError("status " + this.status + ", then: " + this.error, this.error);
			}
			return this;
		}

		/**
		 * Events that carry generated text: not the prelude, the usage chunk or [DONE].
		 */
		public List<Event> contentEvents() {
			return this.events.stream().filter((event) -> !event.done() && !event.content().isEmpty()).toList();
		}

	}

	public Exchange post(String path, String body) {
		return exchange(HttpMethod.POST, path, body, Map.of());
	}

	public Exchange post(String path, String body, Map<String, String> headers) {
		return exchange(HttpMethod.POST, path, body, headers);
	}

	public Exchange get(String path) {
		return exchange(HttpMethod.GET, path, null, Map.of());
	}

	public Exchange delete(String path) {
		return exchange(HttpMethod.DELETE, path, null, Map.of());
	}

	/** A {@code multipart/form-data} POST, as the audio endpoints take. */
	public Exchange postForm(String path, Consumer<HttpClientForm> form, Map<String, String> headers) {
		HttpClient.ResponseReceiver<?> sender = this.client.headers((h) -> headers.forEach(h::set))
			.post()
			.uri(path)
			.sendForm((request, f) -> form.accept(f.multipart(true)));
		return exchange(sender);
	}

	public Exchange exchange(HttpMethod method, String path, String body, Map<String, String> headers) {
		return exchange(request(method, path, body, headers));
	}

	private Exchange exchange(HttpClient.ResponseReceiver<?> receiver) {
		Recorder recorder = new Recorder();
		Throwable error = null;
		try {
			receiver
				.response((response, content) -> recorder.record(response, content.asString(StandardCharsets.UTF_8)))
				.blockLast(this.timeout);
		}
		catch (RuntimeException ex) {
			error = ex;
		}
		return recorder.exchange(error);
	}

	/**
	 * The events of a streamed response as they arrive; cancelling closes the connection.
	 */
	public Flux<Event> stream(String path, String body, Map<String, String> headers) {
		return request(HttpMethod.POST, path, body, headers).response((response, content) -> {
			EventSplitter splitter = new EventSplitter();
			return content.asString(StandardCharsets.UTF_8).concatMapIterable(splitter::feed);
		});
	}

	private HttpClient.ResponseReceiver<?> request(HttpMethod method, String path, String body,
			Map<String, String> headers) {
		HttpClient withHeaders = this.client.headers((h) -> {
			headers.forEach(h::set);
			// A body is JSON unless the caller says otherwise (a hand-built form).
			if (body != null && !h.contains(HttpHeaderNames.CONTENT_TYPE)) {
				h.set(HttpHeaderNames.CONTENT_TYPE, "application/json");
			}
		});
		HttpClient.RequestSender sender = withHeaders.request(method).uri(path);
		return (body != null) ? sender.send(ByteBufFlux.fromString(Mono.just(body))) : sender;
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
