package dev.tokengap.testsupport;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.zip.CRC32;

import io.netty.buffer.ByteBuf;
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
		Exchange exchange = exchange(url, json,
				(buf) -> chunks.add(new Chunk(System.nanoTime(), ByteBufUtil.getBytes(buf))));
		return new Recording(exchange.status, exchange.headers, chunks, exchange.failure);
	}

	/**
	 * POSTs a JSON body and keeps only the length and CRC32 of the response body, for bodies too
	 * large to record.
	 * @param url the full URL
	 * @param json the body
	 * @return the digest of the response
	 */
	public static Digest digest(String url, String json) {
		CRC32 crc = new CRC32();
		long[] length = new long[1];
		Exchange exchange = exchange(url, json, (buf) -> {
			length[0] += buf.readableBytes();
			crc.update(buf.nioBuffer());
		});
		return new Digest(exchange.status, length[0], crc.getValue(), exchange.failure);
	}

	private static Exchange exchange(String url, String json, Consumer<ByteBuf> onChunk) {
		Exchange exchange = new Exchange();
		HttpClient.create(ConnectionProvider.newConnection())
			.headers((h) -> h.set(HttpHeaderNames.CONTENT_TYPE, "application/json"))
			.post()
			.uri(url)
			.send(ByteBufFlux.fromString(Mono.just(json)))
			.response((response, body) -> {
				exchange.status = response.status().code();
				exchange.headers = response.responseHeaders();
				// Nothing is emitted: the buffers stay Reactor Netty's, released after each one.
				return body.handle((buf, sink) -> onChunk.accept(buf));
			})
			.then()
			.onErrorResume((ex) -> {
				exchange.failure = ex;
				return Mono.empty();
			})
			.block(Duration.ofSeconds(60));
		return exchange;
	}

	private static final class Exchange {

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
