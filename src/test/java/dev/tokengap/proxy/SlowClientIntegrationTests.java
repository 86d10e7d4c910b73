package dev.tokengap.proxy;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A client that never finishes its request (slow-loris) is disconnected after
 * {@code tokengap.proxy.request-timeout}.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=0", "tokengap.demo.load=false", "tokengap.proxy.request-timeout=1s" })
class SlowClientIntegrationTests {

	@LocalServerPort
	int port;

	@Test
	void disconnectsAClientThatTricklesItsHeaders() throws Exception {
		try (Socket socket = new Socket("127.0.0.1", this.port)) {
			socket.setSoTimeout((int) Duration.ofSeconds(10).toMillis());
			OutputStream out = socket.getOutputStream();
			out.write("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n".getBytes(StandardCharsets.US_ASCII));
			out.flush();
			long start = System.nanoTime();
			InputStream in = socket.getInputStream();
			byte[] buffer = new byte[1024];
			int read;
			// Keep trickling a header byte now and then until the server gives up on us.
			while ((read = readWithin(in, buffer, socket)) == 0) {
				out.write('X');
				out.flush();
			}
			Duration took = Duration.ofNanos(System.nanoTime() - start);
			assertThat(took).isLessThan(Duration.ofSeconds(5));
			if (read > 0) {
				assertThat(new String(buffer, 0, read, StandardCharsets.US_ASCII)).startsWith("HTTP/1.1 408");
			}
		}
	}

	/** Reads what is there within 200 ms: 0 when nothing came, -1 when closed. */
	private static int readWithin(InputStream in, byte[] buffer, Socket socket) throws Exception {
		socket.setSoTimeout(200);
		try {
			return in.read(buffer);
		}
		catch (java.net.SocketTimeoutException ex) {
			return 0;
		}
		catch (java.net.SocketException ex) {
			return -1;
		}
	}

}
