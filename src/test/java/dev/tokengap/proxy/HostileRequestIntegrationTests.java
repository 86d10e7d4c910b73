package dev.tokengap.proxy;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Requests shaped to confuse the proxy are refused before anything reaches the engine.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=0" })
class HostileRequestIntegrationTests extends ScriptedUpstreamTests {

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
		// Whatever reached the engine was re-framed by tokengap: one length, no chunked framing.
		for (var received : upstream.received("/v1/completions")) {
			assertThat(received.headers().contains("transfer-encoding")).isFalse();
			assertThat(received.headers().getAll("content-length")).hasSizeLessThanOrEqualTo(1);
			assertThat(received.body()).isEmpty();
		}
	}

	private String raw(String request) throws Exception {
		try (Socket socket = new Socket("127.0.0.1", this.port)) {
			socket.setSoTimeout(10_000);
			OutputStream out = socket.getOutputStream();
			out.write(request.getBytes(StandardCharsets.US_ASCII));
			out.flush();
			InputStream in = socket.getInputStream();
			byte[] buffer = new byte[4096];
			int read = in.read(buffer);
			return (read > 0) ? new String(buffer, 0, read, StandardCharsets.US_ASCII) : "";
		}
	}

}
