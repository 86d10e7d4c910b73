package dev.tokengap.backend;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLHandshakeException;

import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.client.PrematureCloseException;
import reactor.netty.resources.ConnectionProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.ssl.SslStoreBundle;
import org.springframework.util.unit.DataSize;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The scraper's own HTTP client against real servers on loopback: connection reuse, the
 * engine closing a kept connection, late bytes after a timeout, host names and TLS.
 */
class MetricsClientTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(5);

	private static final Duration DEADLINE = Duration.ofSeconds(10);

	private final List<AutoCloseable> closeables = new CopyOnWriteArrayList<>();

	@AfterEach
	void close() throws Exception {
		for (AutoCloseable closeable : this.closeables) {
			closeable.close();
		}
	}

	@Test
	void reusesOneConnectionFromFetchToFetch() {
		AtomicInteger connections = new AtomicInteger();
		DisposableServer server = HttpServer.create()
			.host("127.0.0.1")
			.port(0)
			.doOnChannelInit((observer, channel, address) -> connections.incrementAndGet())
			.handle((request, response) -> response.sendString(Mono.just("m 1\n")))
			.bindNow();
		this.closeables.add(server::disposeNow);
		MetricsClient client = client(URI.create("http://127.0.0.1:" + server.port() + "/metrics"), null);
		ScrapeBody body = new ScrapeBody(1024);
		for (int i = 0; i < 5; i++) {
			assertThat(client.fetch(body, TIMEOUT).block(DEADLINE)).isEqualTo("m 1\n");
		}
		assertThat(connections.get()).isEqualTo(1);
	}

	@Test
	void asksAgainOnANewConnectionWhenTheEngineClosedTheKeptOneUnanswered() throws Exception {
		// The first connection answers one request, then closes at the second without an
		// answer, as an engine does when its keep-alive ends just as a request goes out.
		AtomicInteger accepted = new AtomicInteger();
		RawServer server = RawServer.start((connection, request) -> !(connection == 1 && request == 2), accepted);
		this.closeables.add(server);
		MetricsClient client = client(server.uri(), null);
		ScrapeBody body = new ScrapeBody(1024);
		assertThat(client.fetch(body, TIMEOUT).block(DEADLINE)).isEqualTo(RawServer.BODY);
		assertThat(client.fetch(body, TIMEOUT).block(DEADLINE)).isEqualTo(RawServer.BODY);
		assertThat(accepted.get()).isEqualTo(2);
	}

	@Test
	void failsWhenAFreshConnectionClosesUnanswered() throws Exception {
		AtomicInteger accepted = new AtomicInteger();
		RawServer server = RawServer.start((connection, request) -> false, accepted);
		this.closeables.add(server);
		MetricsClient client = client(server.uri(), null);
		assertThatThrownBy(() -> client.fetch(new ScrapeBody(1024), TIMEOUT).block(DEADLINE))
			.isInstanceOf(ScrapeFailedException.class)
			.hasMessage("connection closed before the response ended");
		assertThat(accepted.get()).isEqualTo(1);
	}

	/**
	 * What the retry is for: Reactor Netty asks again by itself only when a connection
	 * closed before the request went out, not when the engine closed it after.
	 */
	@Test
	void reactorNettyAloneFailsWhenTheEngineClosedTheKeptConnectionUnanswered() throws Exception {
		AtomicInteger accepted = new AtomicInteger();
		RawServer server = RawServer.start((connection, request) -> !(connection == 1 && request == 2), accepted);
		this.closeables.add(server);
		ConnectionProvider one = ConnectionProvider.create("plain", 1);
		this.closeables.add(one::dispose);
		HttpClient plain = HttpClient.create(one);
		Mono<String> get = plain.get().uri(server.uri()).responseContent().aggregate().asString();
		assertThat(get.block(DEADLINE)).isEqualTo(RawServer.BODY);
		assertThatThrownBy(() -> get.block(DEADLINE)).hasCauseInstanceOf(PrematureCloseException.class);
		assertThat(accepted.get()).isEqualTo(1);
	}

	@Test
	void asksAgainOnlyOnce() throws Exception {
		AtomicInteger accepted = new AtomicInteger();
		RawServer server = RawServer.start((connection, request) -> request == 1 && connection == 1, accepted);
		this.closeables.add(server);
		MetricsClient client = client(server.uri(), null);
		ScrapeBody body = new ScrapeBody(1024);
		assertThat(client.fetch(body, TIMEOUT).block(DEADLINE)).isEqualTo(RawServer.BODY);
		assertThatThrownBy(() -> client.fetch(body, TIMEOUT).block(DEADLINE)).isInstanceOf(ScrapeFailedException.class)
			.hasMessage("connection closed before the response ended");
		assertThat(accepted.get()).isEqualTo(2);
	}

	@Test
	void closesTheConnectionOfABodyOverTheCap() {
		AtomicInteger connections = new AtomicInteger();
		DisposableServer server = HttpServer.create()
			.host("127.0.0.1")
			.port(0)
			.doOnChannelInit((observer, channel, address) -> connections.incrementAndGet())
			.route((routes) -> routes
				.get("/big", (request, response) -> response.sendString(Flux.range(0, 64).map((i) -> "x".repeat(100))))
				.get("/small", (request, response) -> response.sendString(Mono.just("m 4\n"))))
			.bindNow();
		this.closeables.add(server::disposeNow);
		String base = "http://127.0.0.1:" + server.port();
		MetricsClient big = client(URI.create(base + "/big"), null);
		ScrapeBody body = new ScrapeBody(1024);
		for (int i = 0; i < 3; i++) {
			assertThatThrownBy(() -> big.fetch(body, TIMEOUT).block(DEADLINE)).isInstanceOf(ScrapeFailedException.class)
				.hasMessage("body exceeds max-scrape-size 1024B");
		}
		assertThat(connections.get()).as("a new connection for each fetch").isEqualTo(3);
		assertThat(client(URI.create(base + "/small"), null).fetch(body, TIMEOUT).block(DEADLINE)).isEqualTo("m 4\n");
	}

	@Test
	void dropsWhatATimedOutFetchWouldStillHaveRead() {
		DisposableServer server = HttpServer.create()
			.host("127.0.0.1")
			.port(0)
			.route((routes) -> routes
				.get("/slow",
						(request, response) -> response
							.sendString(Flux.just("late ", "bytes\n").delayElements(Duration.ofMillis(300))))
				.get("/fast", (request, response) -> response.sendString(Mono.just("m 2\n"))))
			.bindNow();
		this.closeables.add(server::disposeNow);
		String base = "http://127.0.0.1:" + server.port();
		MetricsClient slow = client(URI.create(base + "/slow"), null);
		MetricsClient fast = client(URI.create(base + "/fast"), null);
		ScrapeBody body = new ScrapeBody(1024);
		assertThatThrownBy(() -> slow.fetch(body, Duration.ofMillis(100)).block(DEADLINE))
			.hasCauseInstanceOf(TimeoutException.class);
		assertThat(fast.fetch(body, TIMEOUT).block(DEADLINE)).isEqualTo("m 2\n");
		// The slow answer's bytes arrive now, and must not land in the buffer.
		Mono.delay(Duration.ofMillis(800)).block();
		assertThat(body.text()).isEqualTo("m 2\n");
	}

	@Test
	void resolvesAHostName() {
		DisposableServer server = HttpServer.create()
			.host("127.0.0.1")
			.port(0)
			.handle((request, response) -> response.sendString(Mono.just(request.requestHeaders().get("Host"))))
			.bindNow();
		this.closeables.add(server::disposeNow);
		MetricsClient client = client(URI.create("http://localhost:" + server.port() + "/metrics"), null);
		assertThat(client.fetch(new ScrapeBody(1024), TIMEOUT).block(DEADLINE)).isEqualTo("localhost:" + server.port());
	}

	@Test
	void scrapesOverTlsAndVerifiesTheEnginesCertificate(@TempDir Path dir) throws Exception {
		KeyStore keys = selfSigned(dir);
		KeyManagerFactory keyManagers = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
		keyManagers.init(keys, "secret".toCharArray());
		SslContext serverTls = SslContextBuilder.forServer(keyManagers).build();
		DisposableServer server = HttpServer.create()
			.host("127.0.0.1")
			.port(0)
			.secure((spec) -> spec.sslContext(serverTls))
			.handle((request, response) -> response.sendString(Mono.just("m 3\n")))
			.bindNow();
		this.closeables.add(server::disposeNow);
		URI url = URI.create("https://localhost:" + server.port() + "/metrics");
		KeyStore trust = KeyStore.getInstance("PKCS12");
		trust.load(null, null);
		trust.setCertificateEntry("engine", (X509Certificate) keys.getCertificate("engine"));
		SslBundle trusting = SslBundle.of(SslStoreBundle.of(null, null, trust));
		assertThat(client(url, trusting).fetch(new ScrapeBody(1024), TIMEOUT).block(DEADLINE)).isEqualTo("m 3\n");
		// By default the JDK's trust store decides, and it does not know this engine.
		assertThatThrownBy(() -> client(url, null).fetch(new ScrapeBody(1024), TIMEOUT).block(DEADLINE))
			.hasCauseInstanceOf(SSLHandshakeException.class);
	}

	private MetricsClient client(URI url, SslBundle tls) {
		MetricsClient client = new MetricsClient(url, Duration.ofSeconds(2), DataSize.ofKilobytes(1), tls);
		this.closeables.add(0, client);
		return client;
	}

	private static KeyStore selfSigned(Path dir) throws Exception {
		Path store = dir.resolve("engine.p12");
		Process keytool = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
				"-genkeypair", "-alias", "engine", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=localhost",
				"-ext", "SAN=dns:localhost,ip:127.0.0.1", "-validity", "2", "-storetype", "PKCS12", "-keystore",
				store.toString(), "-storepass", "secret", "-keypass", "secret")
			.redirectErrorStream(true)
			.start();
		String output = new String(keytool.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		assertThat(keytool.waitFor()).as(output).isZero();
		KeyStore keys = KeyStore.getInstance("PKCS12");
		try (InputStream in = Files.newInputStream(store)) {
			keys.load(in, "secret".toCharArray());
		}
		return keys;
	}

	/**
	 * An HTTP/1.1 server on a plain socket, one thread per connection, that answers each
	 * request with a kept-alive 200 or closes the connection without an answer.
	 */
	private static final class RawServer implements AutoCloseable {

		static final String BODY = "vllm:num_requests_running 1\n";

		/** Whether to answer: given the connection's number and the request's. */
		interface Script {

			boolean answer(int connection, int request);

		}

		private final ServerSocket socket;

		private RawServer(ServerSocket socket) {
			this.socket = socket;
		}

		static RawServer start(Script script, AtomicInteger accepted) throws IOException {
			ServerSocket listening = new ServerSocket(0, 8, InetAddress.getLoopbackAddress());
			Thread acceptor = new Thread(() -> {
				while (!listening.isClosed()) {
					try {
						Socket connection = listening.accept();
						int number = accepted.incrementAndGet();
						Thread serving = new Thread(() -> serve(connection, number, script));
						serving.setDaemon(true);
						serving.start();
					}
					catch (IOException ex) {
						return;
					}
				}
			}, "raw-server");
			acceptor.setDaemon(true);
			acceptor.start();
			return new RawServer(listening);
		}

		private static void serve(Socket connection, int number, Script script) {
			try (connection) {
				InputStream in = connection.getInputStream();
				OutputStream out = connection.getOutputStream();
				for (int request = 1;; request++) {
					if (!readHead(in)) {
						return;
					}
					if (!script.answer(number, request)) {
						return;
					}
					byte[] body = BODY.getBytes(StandardCharsets.US_ASCII);
					out.write(("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: " + body.length
							+ "\r\n\r\n")
						.getBytes(StandardCharsets.US_ASCII));
					out.write(body);
					out.flush();
				}
			}
			catch (IOException ex) {
				// the client went away
			}
		}

		private static boolean readHead(InputStream in) throws IOException {
			int matched = 0;
			byte[] end = { '\r', '\n', '\r', '\n' };
			while (matched < 4) {
				int b = in.read();
				if (b < 0) {
					return false;
				}
				matched = (b == end[matched]) ? matched + 1 : ((b == '\r') ? 1 : 0);
			}
			return true;
		}

		URI uri() {
			return URI.create("http://127.0.0.1:" + this.socket.getLocalPort() + "/metrics");
		}

		@Override
		public void close() throws IOException {
			this.socket.close();
		}

	}

}
