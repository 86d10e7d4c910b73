package dev.tokengap.proxy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.tokengap.testsupport.PrometheusText;
import dev.tokengap.testsupport.RawHttpClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * tokengap's engine connections against an engine that is a plain socket, so that each
 * test says exactly what goes over the wire: keep-alive reuse, an engine that closes,
 * interim responses, and responses that are not valid HTTP. The engine is named
 * {@code localhost}, so its address is resolved by the client's own resolver.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=0", "tokengap.metrics.models=m-conn" })
class EngineConnectionIntegrationTests {

	private static final SocketEngine engine = SocketEngine.start();

	@LocalServerPort
	private int port;

	@LocalManagementPort
	private int managementPort;

	@DynamicPropertySource
	static void upstreamUrl(DynamicPropertyRegistry registry) {
		registry.add("tokengap.upstream.url", () -> "http://localhost:" + engine.port());
	}

	@AfterAll
	static void stop() throws IOException {
		engine.close();
	}

	@Test
	void reusesOneConnectionForRequestsInSequence() {
		String path = "/v1/reuse";
		engine.answer(path, (request) -> new Answer(json("{}"), false));
		RawHttpClient.Response response = RawHttpClient.exchange(this.port, post(path) + post(path) + post(path), 3);
		assertThat(response.statuses()).containsExactly(200, 200, 200);
		assertThat(engine.connectionsServing(path)).isEqualTo(1);
	}

	@Test
	void opensANewConnectionAfterTheEngineSaidClose() {
		String path = "/v1/close";
		engine.answer(path, (request) -> new Answer("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
				+ "connection: close\r\ncontent-length: 2\r\n\r\n{}", true));
		RawHttpClient.Response response = RawHttpClient.exchange(this.port, post(path) + post(path) + post(path), 3);
		assertThat(response.statuses()).containsExactly(200, 200, 200);
		assertThat(engine.connectionsServing(path)).isEqualTo(3);
	}

	@Test
	void anIdleConnectionTheEngineClosedCostsNoRequest() throws Exception {
		String path = "/v1/idle-closed";
		// uvicorn closes a keep-alive connection after its timeout (5 s)
		// without saying so in the response
		engine.answer(path, (request) -> new Answer(json("{}"), true));
		try (RawHttpClient client = RawHttpClient.connect(this.port, 0)) {
			client.send(post(path));
			client.readUntil("{}", Duration.ofSeconds(5));
			Thread.sleep(300);
			client.send(post(path));
			await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
				client.readWithin(Duration.ofMillis(100));
				assertThat(new RawHttpClient.Response(client.received()).statuses()).containsExactly(200, 200);
			});
		}
		assertThat(engine.connectionsServing(path)).isEqualTo(2);
	}

	@Test
	void aHeadResponseHasNoBodyAndLeavesTheConnectionReusable() {
		String path = "/v1/head";
		// A HEAD response's Content-Length describes a body that is not sent: a client
		// waiting for it would hang, one reading the next response as it would misframe.
		engine.answer(path,
				(request) -> new Answer(request.startsWith("HEAD")
						? "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 9\r\n\r\n"
						: json("{\"get\":1}"), false));
		String head = "HEAD " + path + " HTTP/1.1\r\nhost: t\r\n\r\n";
		String get = "GET " + path + " HTTP/1.1\r\nhost: t\r\n\r\n";
		try (RawHttpClient client = RawHttpClient.connect(this.port, 0)) {
			client.send(head);
			client.readUntil("\r\n\r\n", Duration.ofSeconds(5));
			client.send(get);
			client.readUntil("{\"get\":1}", Duration.ofSeconds(5));
			assertThat(client.received().split("HTTP/1.1 200 OK", -1)).as("two responses").hasSize(3);
			assertThat(client.received()).startsWith("HTTP/1.1 200 OK").endsWith("{\"get\":1}");
		}
		assertThat(engine.connectionsServing(path)).isEqualTo(1);
	}

	@Test
	void skipsAnInterimContinueResponse() {
		String path = "/v1/continue";
		engine.answer(path, (request) -> new Answer("HTTP/1.1 100 Continue\r\n\r\n" + json("{\"ok\":1}"), false));
		RawHttpClient.Response response = RawHttpClient.exchange(this.port, post(path), 1);
		assertThat(response.statuses()).containsExactly(200);
		assertThat(response.firstBody()).isEqualTo("{\"ok\":1}");
	}

	@Test
	void aResponseThatIsNotHttpIsA502ThatSaysSo() {
		String path = "/v1/garbage";
		engine.answer(path, (request) -> new Answer("HTTP/1.1 2x0 Nope\r\nno colon here\r\n\r\n", true));
		RawHttpClient.Response response = RawHttpClient.exchange(this.port, post(path), 1);
		assertThat(response.statuses()).containsExactly(502);
		assertThat(response.text()).contains("BadGatewayError", "sent an invalid response");
	}

	@Test
	void aBrokenChunkMidStreamIsAnUpstreamErrorNotACompletedStream() {
		String path = "/v1/chat/completions";
		String event = "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,"
				+ "\"delta\":{\"content\":\"one\"},\"finish_reason\":null}]}\n\n";
		engine.answer(path,
				(request) -> new Answer("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
						+ "transfer-encoding: chunked\r\n\r\n" + Integer.toHexString(event.length()) + "\r\n" + event
						+ "\r\nzz-not-a-size\r\n" + "data: [DONE]\n\n\r\n0\r\n\r\n", true));
		String body = "{\"model\":\"m-conn\",\"stream\":true}";
		String text;
		try (RawHttpClient client = RawHttpClient.connect(this.port, 0)) {
			client.send("POST " + path + " HTTP/1.1\r\nhost: t\r\ncontent-type: application/json\r\ncontent-length: "
					+ body.length() + "\r\n\r\n" + body);
			assertThat(client.awaitClosed(Duration.ofSeconds(10))).as("the client connection is closed").isTrue();
			text = client.received();
		}
		assertThat(text).contains("\"content\":\"one\"").doesNotContain("[DONE]");
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(PrometheusText.scrape(this.managementPort)
				.value("tokengap_streams_total", "model_name", "m-conn", "outcome", "upstream_error")).isEqualTo(1));
		assertThat(PrometheusText.scrape(this.managementPort)
			.matching("tokengap_streams_total", "model_name", "m-conn", "endpoint", "chat_completions", "outcome",
					"completed"))
			.allSatisfy((sample) -> assertThat(sample.value()).isZero());
	}

	@Test
	void aChunkedStreamReachesTheClientWholeInTheProxysOwnFramingAndTheConnectionServesTheNext() {
		// The engine's chunked body, with a chunk extension, a size line cut between two
		// writes and a trailer, reaches the client as the same bytes of content in
		// tokengap's own chunked framing (Netty's codec, as any HTTP proxy frames it):
		// no extension or trailer of the engine's passes, and the engine connection
		// takes the next request.
		String path = "/v1/completions";
		String first = "data: {\"id\":\"c\",\"object\":\"text_completion\",\"choices\":[{\"index\":0,"
				+ "\"text\":\"one\",\"finish_reason\":null}]}\n\n";
		String second = "data: {\"id\":\"c\",\"object\":\"text_completion\",\"choices\":[{\"index\":0,"
				+ "\"text\":\"two\",\"finish_reason\":null}]}\n\n";
		String done = "data: [DONE]\n\n";
		String secondSize = Integer.toHexString(second.length()) + ";ext=1";
		String framed = Integer.toHexString(first.length()) + "\r\n" + first + "\r\n" + secondSize + "\r\n" + second
				+ "\r\n" + Integer.toHexString(done.length()) + "\r\n" + done + "\r\n";
		int cut = framed.indexOf(secondSize) + 1;
		engine.answer(path,
				(request) -> new Answer(
						"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n" + "transfer-encoding: chunked\r\n\r\n"
								+ framed.substring(0, cut),
						false, framed.substring(cut) + "0\r\nx-engine-trailer: 1\r\n\r\n", Duration.ofMillis(200)));
		PrometheusText before = PrometheusText.scrape(this.managementPort);
		String body = "{\"model\":\"m-conn\",\"stream\":true,\"prompt\":\"x\"}";
		String request = "POST " + path + " HTTP/1.1\r\nhost: t\r\ncontent-type: application/json\r\n"
				+ "content-length: " + body.length() + "\r\n\r\n" + body;
		String content = first + second + done;
		try (RawHttpClient client = RawHttpClient.connect(this.port, 0)) {
			for (int i = 1; i <= 2; i++) {
				client.send(request);
				int responses = i;
				await().atMost(Duration.ofSeconds(5)).until(() -> {
					client.readWithin(Duration.ofMillis(100));
					return client.received().split("\r\n0\r\n\r\n", -1).length > responses;
				});
			}
			String[] responses = client.received().split("(?=HTTP/1\\.1 200)");
			assertThat(responses).hasSize(2).allSatisfy((response) -> {
				assertThat(response).contains("transfer-encoding: chunked")
					.doesNotContain("x-engine-trailer")
					.doesNotContain(";ext=1");
				assertThat(dechunk(response.substring(response.indexOf("\r\n\r\n") + 4))).isEqualTo(content);
			});
		}
		assertThat(engine.connectionsServing(path)).as("one engine connection for both streams").isEqualTo(1);
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(completed(PrometheusText.scrape(this.managementPort)) - completed(before))
				.isEqualTo(2));
		assertThat(ttftCount(PrometheusText.scrape(this.managementPort)) - ttftCount(before))
			.as("both streams' first tokens timed")
			.isEqualTo(2);
	}

	/** The content of a chunked body that ends with its last chunk. */
	private static String dechunk(String framed) {
		StringBuilder content = new StringBuilder();
		int at = 0;
		while (true) {
			int lineEnd = framed.indexOf("\r\n", at);
			int size = Integer.parseInt(framed.substring(at, lineEnd), 16);
			if (size == 0) {
				return content.toString();
			}
			content.append(framed, lineEnd + 2, lineEnd + 2 + size);
			at = lineEnd + 2 + size + 2;
		}
	}

	private static double completed(PrometheusText scrape) {
		return scrape.value("tokengap_streams_total", "model_name", "m-conn", "outcome", "completed");
	}

	private static double ttftCount(PrometheusText scrape) {
		return scrape.value("tokengap_time_to_first_token_seconds_count", "model_name", "m-conn");
	}

	@Test
	void aRequestTargetThatJavaNetUriRejectsIsStillForwarded() {
		// Spring's adapter parses every target with java.net.URI and answers 400 itself,
		// never reaching the proxy, for one it rejects (such as a '|' in the query); the
		// proxy port calls the proxy directly (ProxyRoute), so the engine
		// decides, and the request is counted.
		String target = "/v1/pipe?q=a|b";
		engine.answer(target, (request) -> new Answer(json("{\"pipe\":true}"), false));
		RawHttpClient.Response response = RawHttpClient.exchange(this.port,
				"GET " + target + " HTTP/1.1\r\nhost: t\r\n\r\n", 1);
		assertThat(response.statuses()).containsExactly(200);
		assertThat(response.firstBody()).isEqualTo("{\"pipe\":true}");
	}

	@Test
	void aResponseHeadTheEngineSendsAloneReachesTheClientBeforeItsBody() {
		// A head is held back until the end of the event loop's turn, so that a body read
		// with it leaves in the same write (ResponseHeadFlush): a head on its own must
		// still go out at once, as a stream's does during a long prefill.
		String path = "/v1/head-first";
		String event = "data: {\"choices\":[]}\n\n";
		engine.answer(path,
				(request) -> new Answer(
						"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n",
						false, Integer.toHexString(event.length()) + "\r\n" + event + "\r\n0\r\n\r\n",
						Duration.ofSeconds(2)));
		try (RawHttpClient client = RawHttpClient.connect(this.port, 0)) {
			long start = System.nanoTime();
			client.send(post(path));
			String head = client.readUntil("\r\n\r\n", Duration.ofSeconds(1));
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(1));
			assertThat(head).startsWith("HTTP/1.1 200").doesNotContain("data:");
			assertThat(client.readUntil("\r\n0\r\n\r\n", Duration.ofSeconds(5))).contains(event);
		}
	}

	private static String json(String body) {
		return "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: " + body.length() + "\r\n\r\n"
				+ body;
	}

	private static String post(String path) {
		return "POST " + path + " HTTP/1.1\r\nhost: t\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}";
	}

	/**
	 * What the engine writes for a request, whether it closes the connection then, and
	 * what it writes after a pause (nothing when {@code later} is empty).
	 */
	record Answer(String bytes, boolean close, String later, Duration pause) {

		Answer(String bytes, boolean close) {
			this(bytes, close, "", Duration.ZERO);
		}

	}

	/**
	 * An engine that is a server socket: one thread per connection reads requests (head
	 * and {@code Content-Length} body) and writes the scripted answer for the path;
	 * anything unscripted ({@code /metrics}, {@code /v1/models}) is a 404.
	 */
	static final class SocketEngine implements AutoCloseable {

		private static final Pattern LENGTH = Pattern.compile("(?im)^content-length:\\s*(\\d+)");

		private final ServerSocket server;

		private final ConcurrentHashMap<String, Function<String, Answer>> answers = new ConcurrentHashMap<>();

		private final ConcurrentHashMap<String, Set<Integer>> connections = new ConcurrentHashMap<>();

		private final AtomicInteger accepted = new AtomicInteger();

		private SocketEngine(ServerSocket server) {
			this.server = server;
		}

		static SocketEngine start() {
			try {
				SocketEngine engine = new SocketEngine(new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1")));
				Thread acceptor = new Thread(engine::accept, "socket-engine");
				acceptor.setDaemon(true);
				acceptor.start();
				return engine;
			}
			catch (IOException ex) {
				throw new IllegalStateException(ex);
			}
		}

		int port() {
			return this.server.getLocalPort();
		}

		void answer(String path, Function<String, Answer> answer) {
			this.answers.put(path, answer);
		}

		/** How many connections carried a request for the path. */
		int connectionsServing(String path) {
			return this.connections.getOrDefault(path, Set.of()).size();
		}

		private void accept() {
			while (!this.server.isClosed()) {
				try {
					Socket socket = this.server.accept();
					int id = this.accepted.incrementAndGet();
					Thread connection = new Thread(() -> serve(socket, id), "socket-engine-" + id);
					connection.setDaemon(true);
					connection.start();
				}
				catch (IOException ex) {
					return;
				}
			}
		}

		private void serve(Socket socket, int id) {
			try (socket; InputStream in = socket.getInputStream(); OutputStream out = socket.getOutputStream()) {
				while (true) {
					String head = readHead(in);
					if (head == null) {
						return;
					}
					Matcher length = LENGTH.matcher(head);
					if (length.find()) {
						in.readNBytes(Integer.parseInt(length.group(1)));
					}
					String path = head.substring(head.indexOf(' ') + 1, head.indexOf(' ', head.indexOf(' ') + 1));
					this.connections.computeIfAbsent(path, (p) -> ConcurrentHashMap.newKeySet()).add(id);
					Function<String, Answer> script = this.answers.get(path);
					Answer answer = (script != null) ? script.apply(head)
							: new Answer("HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n", false);
					out.write(answer.bytes().getBytes(StandardCharsets.ISO_8859_1));
					out.flush();
					if (!answer.later().isEmpty()) {
						sleep(answer.pause());
						out.write(answer.later().getBytes(StandardCharsets.ISO_8859_1));
						out.flush();
					}
					if (answer.close()) {
						return;
					}
				}
			}
			catch (IOException ex) {
				// the proxy closed the connection
			}
		}

		private static void sleep(Duration pause) throws IOException {
			try {
				Thread.sleep(pause.toMillis());
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IOException(ex);
			}
		}

		private static String readHead(InputStream in) throws IOException {
			ByteArrayOutputStream head = new ByteArrayOutputStream();
			int matched = 0;
			int b;
			while ((b = in.read()) >= 0) {
				head.write(b);
				matched = (b == "\r\n\r\n".charAt(matched)) ? matched + 1 : (b == '\r') ? 1 : 0;
				if (matched == 4) {
					return head.toString(StandardCharsets.ISO_8859_1);
				}
			}
			return null;
		}

		@Override
		public void close() throws IOException {
			this.server.close();
		}

	}

}
