package dev.tokengap.proxy;

import java.util.List;
import java.util.Map;

import io.netty.handler.codec.http.HttpHeaders;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.test.context.SpringBootTest;

import dev.tokengap.testsupport.RawHttpClient;
import dev.tokengap.testsupport.ScriptedUpstreamTests;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Hop-by-hop headers (RFC 9110 section 7.6.1: {@code Connection} and every header it
 * names, {@code Keep-Alive}, {@code Proxy-Connection}, {@code TE}, {@code Trailer},
 * {@code Transfer-Encoding}, {@code Upgrade}, plus the proxy's own
 * {@code Proxy-Authorization} and {@code Proxy-Authenticate}) stop at tokengap in both
 * directions; end-to-end headers, credentials for the engine included, pass unchanged.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=0", "tokengap.mode=demo" })
class HopByHopIntegrationTests extends ScriptedUpstreamTests {

	static final List<String> REQUEST_HOP_BY_HOP = List.of("connection", "keep-alive", "proxy-connection", "te",
			"trailer", "transfer-encoding", "upgrade", "proxy-authorization", "x-secret-hop", "x-other-hop");

	static final List<String> RESPONSE_HOP_BY_HOP = List.of("keep-alive", "proxy-connection", "te", "trailer",
			"transfer-encoding", "upgrade", "proxy-authenticate", "x-engine-hop", "x-engine-other-hop");

	@Test
	void stripsHopByHopRequestHeadersAndPassesCredentialsToTheEngineUnchanged() {
		upstream.respond(200, "application/json", "{}");
		RawHttpClient.Response response = RawHttpClient.exchange(this.port,
				"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
						+ "Connection: keep-alive, X-Secret-Hop\r\nConnection: x-other-hop\r\nKeep-Alive: timeout=5\r\n"
						+ "Proxy-Connection: keep-alive\r\nTE: trailers\r\nTrailer: X-Checksum\r\nUpgrade: foo/1\r\n"
						+ "Proxy-Authorization: Basic cHJveHk6c2VjcmV0\r\nX-Secret-Hop: for-tokengap-only\r\n"
						+ "X-Other-Hop: also-for-tokengap\r\nAuthorization: Bearer sk-secret-hop-test\r\n"
						+ "api-key: azure-style-key\r\nx-api-key: anthropic-style-key\r\nX-End-To-End: kept\r\n"
						+ "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
						+ "2\r\n{}\r\n0\r\n\r\n",
				1);
		assertThat(response.statuses()).containsExactly(200);
		HttpHeaders received = upstream.received("/v1/chat/completions").get(0).headers();
		for (String name : REQUEST_HOP_BY_HOP) {
			assertThat(received.getAll(name)).as(name).isEmpty();
		}
		assertThat(received.getAll("authorization")).containsExactly("Bearer sk-secret-hop-test");
		assertThat(received.getAll("api-key")).containsExactly("azure-style-key");
		assertThat(received.getAll("x-api-key")).containsExactly("anthropic-style-key");
		assertThat(received.getAll("x-end-to-end")).containsExactly("kept");
		assertThat(received.getAll("content-length")).containsExactly("2");
	}

	@Test
	void stripsHopByHopResponseHeadersAndPassesTheEngineEndToEndHeaders() {
		upstream.handle((req, res) -> res.status(200)
			.header("Connection", "keep-alive, X-Engine-Hop")
			.addHeader("Connection", "X-Engine-Other-Hop")
			.header("Keep-Alive", "timeout=5, max=100")
			.header("Proxy-Connection", "keep-alive")
			.header("TE", "trailers")
			.header("Trailer", "X-Checksum")
			.header("Upgrade", "foo/1")
			.header("Proxy-Authenticate", "Basic realm=\"engine\"")
			.header("X-Engine-Hop", "engine-internal")
			.header("X-Engine-Other-Hop", "engine-internal-too")
			.header("X-Engine-End", "kept")
			.header("Content-Type", "application/json")
			.sendString(Mono.just("{\"ok\":true}"))
			.then());
		RawHttpClient.Response response = RawHttpClient.exchange(this.port,
				"GET /v1/models/m HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
		assertThat(response.statuses()).containsExactly(200);
		Map<String, List<String>> headers = response.firstHeaders();
		for (String name : RESPONSE_HOP_BY_HOP) {
			assertThat(headers).as(response.text()).doesNotContainKey(name);
		}
		// The only Connection header is tokengap's own, for this client connection.
		assertThat(headers.get("connection")).containsExactly("close");
		assertThat(headers.get("x-engine-end")).containsExactly("kept");
		assertThat(response.firstBody()).isEqualTo("{\"ok\":true}");
	}

}
