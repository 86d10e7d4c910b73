package dev.tokengap.proxy;

import java.time.Duration;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.boot.test.context.SpringBootTest;

import dev.tokengap.testsupport.PrometheusText;
import dev.tokengap.testsupport.RawHttpClient;
import dev.tokengap.testsupport.ScriptedUpstream;
import dev.tokengap.testsupport.ScriptedUpstreamTests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.params.provider.Arguments.arguments;

/**
 * Requests shaped to confuse the proxy about where one request ends and the next begins
 * (request smuggling): each is refused with 400 before anything reaches the engine, or
 * reaches it re-framed by tokengap with one {@code Content-Length}; a request hidden in a
 * body never reaches the engine as a request of its own.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=0", "tokengap.mode=demo" })
class HostileRequestIntegrationTests extends ScriptedUpstreamTests {

	/** A request hidden in a body: it must never reach the engine. */
	static final String HIDDEN = "GET /hidden HTTP/1.1\r\nHost: x\r\n\r\n";

	/**
	 * Sent after the hostile bytes on the same connection; reaches the engine only if
	 * they were accepted.
	 */
	static final String NEXT = "GET /v1/next HTTP/1.1\r\nHost: x\r\n\r\n";

	static final String POST = "POST /v1/smuggle HTTP/1.1\r\nHost: x\r\n";

	@Test
	void refusesOversizeHeadersWith431() throws Exception {
		upstream.respond(200, "application/json", "{}");
		String response = raw("GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Big: " + "a".repeat(20_000) + "\r\n\r\n");
		assertThat(response).startsWith("HTTP/1.1 431");
		assertThat(upstream.received("/v1/models")).as("nothing forwarded").isEmpty();
	}

	@Test
	void forwardsOnlyUnambiguouslyFramedRequestsWhenContentLengthAndTransferEncodingConflict() throws Exception {
		upstream.respond(200, "application/json", "{}");
		String response = raw("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n"
				+ "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n");
		assertThat(response).startsWith("HTTP/1.1 ");
		// Whatever reached the engine was re-framed by tokengap: one length,
		// no chunked framing.
		for (var received : upstream.received("/v1/completions")) {
			assertThat(received.headers().contains("transfer-encoding")).isFalse();
			assertThat(received.headers().getAll("content-length")).hasSizeLessThanOrEqualTo(1);
			assertThat(received.body()).isEmpty();
		}
	}

	static Stream<Arguments> ambiguouslyFramedRequests() {
		String hiddenChunk = chunk(HIDDEN) + "0\r\n\r\n";
		int both = 5 + HIDDEN.length();
		return Stream.of(
				arguments("duplicate Content-Length",
						POST + "Content-Length: 5\r\nContent-Length: " + both + "\r\n\r\nhello" + HIDDEN),
				arguments("Content-Length list", POST + "Content-Length: 5, " + both + "\r\n\r\nhello" + HIDDEN),
				arguments("equal Content-Length list", POST + "Content-Length: 5, 5\r\n\r\nhello" + HIDDEN),
				arguments("negative Content-Length", POST + "Content-Length: -1\r\n\r\n" + HIDDEN),
				arguments("non-numeric Content-Length", POST + "Content-Length: abc\r\n\r\n" + HIDDEN),
				arguments("signed Content-Length", POST + "Content-Length: +5\r\n\r\nhello" + HIDDEN),
				arguments("Content-Length and chunked",
						POST + "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n" + hiddenChunk),
				arguments("Content-Length and xchunked",
						POST + "Content-Length: 4\r\nTransfer-Encoding: xchunked\r\n\r\n" + hiddenChunk),
				arguments("xchunked", POST + "Transfer-Encoding: xchunked\r\n\r\n" + hiddenChunk),
				arguments("chunked, identity", POST + "Transfer-Encoding: chunked, identity\r\n\r\n" + hiddenChunk),
				arguments("identity, chunked", POST + "Transfer-Encoding: identity, chunked\r\n\r\n" + hiddenChunk),
				arguments("gzip, chunked", POST + "Transfer-Encoding: gzip, chunked\r\n\r\n" + hiddenChunk),
				arguments("Transfer-Encoding twice",
						POST + "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n" + hiddenChunk),
				arguments("chunked then identity",
						POST + "Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n\r\n" + hiddenChunk),
				arguments("space before the colon", POST + "Transfer-Encoding : chunked\r\n\r\n" + hiddenChunk),
				arguments("folded header line", POST + " Transfer-Encoding: chunked\r\n\r\n" + hiddenChunk),
				arguments("non-hex chunk size",
						POST + "Transfer-Encoding: chunked\r\n\r\nzz\r\n" + HIDDEN + "\r\n0\r\n\r\n"),
				arguments("negative chunk size",
						POST + "Transfer-Encoding: chunked\r\n\r\n-5\r\nhello\r\n0\r\n\r\n" + HIDDEN),
				arguments("overflowing chunk size",
						POST + "Transfer-Encoding: chunked\r\n\r\nfffffffffffffffff\r\nhello" + "\r\n0\r\n\r\n"
								+ HIDDEN),
				arguments("chunk longer than its size",
						POST + "Transfer-Encoding: chunked\r\n\r\n3\r\n{\"model\":\"m\"}\r\n0\r\n\r\n" + HIDDEN),
				arguments("valid chunk then a bad size", POST + "Transfer-Encoding: chunked\r\n\r\n"
						+ chunk("{\"model\":\"m\"}") + "zz\r\n\r\n0\r\n\r\n" + HIDDEN));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("ambiguouslyFramedRequests")
	void refusesAmbiguouslyFramedRequestsWith400AndForwardsNothing(String shape, String request) {
		upstream.respond(200, "application/json", "{}");
		RawHttpClient.Response response = RawHttpClient.exchange(this.port, request + NEXT);
		assertThat(response.statuses()).as(response.text()).containsExactly(400);
		// A later request on a new connection reaches the engine;
		// by then nothing else did.
		assertThat(RawHttpClient.exchange(this.port, "GET /v1/later HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
			.statuses()).containsExactly(200);
		assertThat(upstream.received()).extracting(ScriptedUpstream.Received::uri).containsExactly("/v1/later");
	}

	@Test
	void countsARequestWhoseChunkedBodyBrokeAsA400() {
		upstream.respond(200, "application/json", "{}");
		String[] refused = { "endpoint", "chat_completions", "status", "400" };
		double before = PrometheusText.scrape(this.managementPort).value("tokengap_requests_total", refused);
		RawHttpClient.Response response = RawHttpClient.exchange(this.port,
				"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n" + "Transfer-Encoding: chunked\r\n\r\n"
						+ chunk("{\"model\":\"m\"}") + "zz\r\n\r\n0\r\n\r\n");
		assertThat(response.statuses()).containsExactly(400);
		// Counted when Reactor Netty ends the request, as it closes the connection.
		await().atMost(Duration.ofSeconds(10))
			.until(() -> PrometheusText.scrape(this.managementPort).value("tokengap_requests_total", refused),
					(count) -> count == before + 1);
		assertThat(upstream.received()).isEmpty();
	}

	static Stream<Arguments> unusualButUnambiguousRequests() {
		String hiddenChunk = chunk(HIDDEN) + "0\r\n\r\n";
		return Stream.of(arguments("upper-case CHUNKED", POST + "Transfer-Encoding: CHUNKED\r\n\r\n" + hiddenChunk),
				arguments("tabs and spaces around chunked",
						POST + "Transfer-Encoding:\t chunked \t\r\n\r\n" + hiddenChunk),
				arguments("chunk extension",
						POST + "Transfer-Encoding: chunked\r\n\r\n" + Integer.toHexString(HIDDEN.length())
								+ ";ext=\"x\"\r\n" + HIDDEN + "\r\n0\r\n\r\n"),
				arguments("split into chunks",
						POST + "Transfer-Encoding: chunked\r\n\r\n" + chunk(HIDDEN.substring(0, 7))
								+ chunk(HIDDEN.substring(7)) + "0\r\n\r\n"),
				arguments("Content-Length with leading zeros",
						POST + "Content-Length: 000" + HIDDEN.length() + "\r\n\r\n" + HIDDEN));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("unusualButUnambiguousRequests")
	void forwardsUnusualButUnambiguousFramingReframedWithOneContentLength(String shape, String request) {
		upstream.respond(200, "application/json", "{}");
		RawHttpClient.Response response = RawHttpClient.exchange(this.port, request + NEXT, 2);
		assertThat(response.statuses()).as(response.text()).containsExactly(200, 200);
		assertThat(upstream.received()).extracting(ScriptedUpstream.Received::uri)
			.containsExactly("/v1/smuggle", "/v1/next");
		ScriptedUpstream.Received smuggle = upstream.received("/v1/smuggle").get(0);
		assertThat(smuggle.body()).isEqualTo(HIDDEN);
		assertThat(smuggle.headers().contains("transfer-encoding")).isFalse();
		assertThat(smuggle.headers().getAll("content-length")).containsExactly(Integer.toString(HIDDEN.length()));
	}

	private static String chunk(String data) {
		return Integer.toHexString(data.length()) + "\r\n" + data + "\r\n";
	}

	private String raw(String request) {
		return RawHttpClient.exchange(this.port, request).text();
	}

}
