package dev.tokengap.testsupport;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.netty.buffer.ByteBufUtil;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import reactor.core.publisher.Mono;
import reactor.netty.ByteBufFlux;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;

/**
 * A plain HTTP client that records when each body chunk arrived, for streaming assertions.
 */
public final class StreamingClient {

	private StreamingClient() {
	}

	/**
	 * POSTs a JSON body and records the response.
	 * @param url the full URL
	 * @param json the body
	 * @return the recorded response
	 */
	public static Recording post(String url, String json) {
		List<Chunk> chunks = new ArrayList<>();
		Throwable[] failure = new Throwable[1];
		HttpHeaders[] headers = new HttpHeaders[1];
		int[] status = new int[1];
		HttpClient.create(ConnectionProvider.newConnection())
			.headers((h) -> h.set(HttpHeaderNames.CONTENT_TYPE, "application/json"))
			.post()
			.uri(url)
			.send(ByteBufFlux.fromString(Mono.just(json)))
			.response((response, body) -> {
				status[0] = response.status().code();
				headers[0] = response.responseHeaders();
				return body.map((buf) -> new Chunk(System.nanoTime(), ByteBufUtil.getBytes(buf)));
			})
			.doOnNext(chunks::add)
			.then()
			.onErrorResume((ex) -> {
				failure[0] = ex;
				return Mono.empty();
			})
			.block(Duration.ofSeconds(60));
		return new Recording(status[0], headers[0], chunks, failure[0]);
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
	 * @param failure how the body ended when it did not end cleanly (an incomplete chunked body),
	 * else null
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

		/** Arrival time of the chunk that completed the first occurrence of {@code marker}. */
		public long arrivalOf(String marker) {
			StringBuilder seen = new StringBuilder();
			for (Chunk chunk : this.chunks) {
				seen.append(chunk.text());
				if (seen.indexOf(marker) >= 0) {
					return chunk.nanos();
				}
			}
			throw new AssertionError("marker never arrived; received " + seen.length() + " chars: " + seen.substring(0, Math.min(300, seen.length())));
		}

	}

}
