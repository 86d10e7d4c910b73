package dev.tokengap.proxy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.publisher.Mono;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import dev.tokengap.testsupport.BufferMemory;
import dev.tokengap.testsupport.HealthyStream;
import dev.tokengap.testsupport.PrometheusText;
import dev.tokengap.testsupport.RawHttpClient;
import dev.tokengap.testsupport.ScriptedUpstream;
import dev.tokengap.testsupport.ScriptedUpstream.Step;
import dev.tokengap.testsupport.ScriptedUpstreamTests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Clients that misbehave: going away at each phase of an exchange, not reading, or never
 * sending a whole request. Each time the engine's request is cancelled, the outcome is
 * counted once, a healthy stream beside it is unaffected and no buffer leaks.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=0", "tokengap.mode=demo", "tokengap.proxy.request-timeout=1s",
				"tokengap.proxy.client-send-buffer=64KB",
				"tokengap.metrics.models=m-healthy,m-before-headers,m-last-event,m-after-done,m-not-reading" })
@ExtendWith(OutputCaptureExtension.class)
class ClientFaultIntegrationTests extends ScriptedUpstreamTests {

	private static final String CHAT = "/v1/chat/completions";

	private final AtomicReference<CompletableFuture<Void>> engineConnectionClosed = new AtomicReference<>();

	@Test
	void aClientGoneBeforeTheResponseHeadersCancelsTheEngineRequest() throws Exception {
		upstream.handle((req, res) -> {
			this.engineConnectionClosed.set(ScriptedUpstream.closed(res));
			// The engine is still queueing the request: no headers yet.
			return Mono.never();
		});
		HealthyStream healthy = startHealthyStream();
		try (RawHttpClient client = RawHttpClient.connect(this.port, 0)) {
			client.send(RawHttpClient.post(CHAT, request("m-before-headers")));
			await().atMost(Duration.ofSeconds(5)).until(() -> this.engineConnectionClosed.get() != null);
		}
		assertEngineRequestCancelled();
		assertCountedOnceAsCancelled("m-before-headers", "499");
		healthy.assertWhole();
	}

	@ParameterizedTest(name = "{0}")
	@ValueSource(strings = { "m-last-event", "m-after-done" })
	void aClientGoneAtTheEndOfTheStreamCancelsTheEngineRequest(String model) throws Exception {
		// The engine has written part of its last event, or all of it and [DONE],
		// but not yet the end of its body.
		String last = model.equals("m-last-event") ? "data: {\"choices\":[{\"index\":0,\"delta\":{\"cont"
				: ScriptedUpstream.chatEvent("two") + "data: [DONE]\n\n";
		upstream.handle((req, res) -> {
			this.engineConnectionClosed.set(ScriptedUpstream.closed(res));
			return ScriptedUpstream
				.play(res, Step.list(Step.of(0, ScriptedUpstream.chatEvent("one")), Step.of(20, last)), (nanos) -> {
				})
				.then(Mono.never());
		});
		HealthyStream healthy = startHealthyStream();
		try (RawHttpClient client = RawHttpClient.connect(this.port, 0)) {
			client.send(RawHttpClient.post(CHAT, request(model)));
			client.readUntil(last, Duration.ofSeconds(5));
		}
		assertEngineRequestCancelled();
		assertCountedOnceAsCancelled(model, "200");
		healthy.assertWhole();
	}

	@Test
	void aClientThatStopsReadingStopsTheEngineAndTokengapHoldsBoundedMemory() throws Exception {
		long wanted = 50L * 1024 * 1024;
		AtomicLong written = new AtomicLong();
		upstream.handle((req, res) -> {
			this.engineConnectionClosed.set(ScriptedUpstream.closed(res));
			res.header("content-type", "text/event-stream");
			return ScriptedUpstream.writeAll(res, ScriptedUpstream.chatEvents(wanted), written);
		});
		HealthyStream healthy = startHealthyStream();
		try (BufferMemory memory = BufferMemory.sample();
				RawHttpClient client = RawHttpClient.connect(this.port, 16 * 1024)) {
			client.send(RawHttpClient.post(CHAT, request("m-not-reading")));
			client.readUntil("data: ", Duration.ofSeconds(5));
			long read = client.receivedBytes();
			// Now the client reads nothing more; the engine's writes stall once the
			// sockets fill.
			awaitStalled(written);
			long inTokengap = memory.peakGrowth();
			System.out.printf("not reading: engine wrote %d of %d bytes, client read %d, tokengap holds %d%n",
					written.get(), wanted, read, inTokengap);
			assertThat(written.get()).as("the engine's writes stalled").isLessThan(wanted / 4);
			assertThat(written.get() - read).as("bytes between engine and client: socket buffers and one chunk")
				.isLessThan(8L * 1024 * 1024);
			assertThat(inTokengap).as("peak buffer memory for the stream").isLessThan(4L * 1024 * 1024);
		}
		assertEngineRequestCancelled();
		assertCountedOnceAsCancelled("m-not-reading", "200");
		healthy.assertWhole();
	}

	/**
	 * A client gone halfway through its request body: the engine never sees the request,
	 * and it is counted once, as the client's close (499), under the label of a model
	 * never read. Its gathered bytes are released (the leak detector fails the run
	 * otherwise).
	 */
	@Test
	void aClientGoneHalfwayThroughItsBodyIsCountedOnceAndNeverForwarded() throws Exception {
		PrometheusText start = PrometheusText.scrape(this.managementPort);
		try (RawHttpClient client = RawHttpClient.connect(this.port, 0)) {
			client.send("POST " + CHAT + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
					+ "Content-Length: 1000\r\n\r\n{\"model\":\"m-half\",\"messages\":[");
			// the exchange starts with the headers; the rest of the body never comes
			Thread.sleep(300);
		}
		assertCountedOnceUnderUnknownModel(start, "499");
		assertThat(upstream.received(CHAT)).noneMatch((r) -> r.body().contains("m-half"));
	}

	/**
	 * A client that sends its headers and part of its body, then nothing more: after
	 * {@code tokengap.proxy.request-timeout} it gets an OpenAI-style 408, counted once as
	 * such, and the connection is closed; the engine never sees the request. Not a
	 * failure of tokengap's (no 500, no ERROR line).
	 */
	@Test
	void aClientThatStopsSendingItsBodyIsAnswered408AndDisconnected(CapturedOutput output) throws Exception {
		PrometheusText start = PrometheusText.scrape(this.managementPort);
		try (RawHttpClient client = RawHttpClient.connect(this.port, 0)) {
			client.send("POST " + CHAT + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
					+ "Content-Length: 1000\r\n\r\n{\"model\":\"m-stalled\",\"messages\":[");
			long sent = System.nanoTime();
			assertThat(client.awaitClosed(Duration.ofSeconds(5))).as("disconnected by the request timeout").isTrue();
			Duration took = Duration.ofNanos(System.nanoTime() - sent);
			assertThat(took).isBetween(Duration.ofMillis(800), Duration.ofSeconds(4));
			assertThat(client.received()).startsWith("HTTP/1.1 408")
				.contains("\"type\":\"RequestTimeoutError\"")
				.contains("x-request-id");
		}
		assertCountedOnceUnderUnknownModel(start, "408");
		assertThat(upstream.received(CHAT)).noneMatch((r) -> r.body().contains("m-stalled"));
		assertThat(output).doesNotContain("Unexpected failure").doesNotContain("ERROR");
	}

	/**
	 * A keep-alive connection is timed again from the end of each response: the response
	 * end passes the request timeout's handler, or an idle connection would be held
	 * forever.
	 */
	@Test
	void aKeepAliveConnectionIsClosedOneRequestTimeoutAfterItsLastResponse() {
		upstream.respond(200, "application/json", "{\"id\":\"cmpl-1\",\"object\":\"chat.completion\"}");
		try (RawHttpClient client = RawHttpClient.connect(this.port, 0)) {
			client.send(RawHttpClient.post(CHAT, "{\"model\":\"m-healthy\"}"));
			client.readUntil("chat.completion\"}", Duration.ofSeconds(5));
			long answered = System.nanoTime();
			assertThat(client.awaitClosed(Duration.ofSeconds(5))).as("closed while idle").isTrue();
			assertThat(Duration.ofNanos(System.nanoTime() - answered)).isBetween(Duration.ofMillis(800),
					Duration.ofSeconds(4));
		}
	}

	/**
	 * A client that asks to continue ({@code Expect: 100-continue}, as curl does for a
	 * long prompt) gets one interim answer, sends its body, and gets the engine's answer;
	 * the interim answer is not taken for the request's end by the request timeout.
	 */
	@Test
	void aRequestThatAsksToContinueGetsOneInterimAnswerThenTheEngines() {
		upstream.respond(200, "application/json", "{\"id\":\"cmpl-2\",\"object\":\"chat.completion\"}");
		String body = "{\"model\":\"m-healthy\",\"messages\":[]}";
		try (RawHttpClient client = RawHttpClient.connect(this.port, 0)) {
			client.send("POST " + CHAT + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
					+ "Expect: 100-continue\r\nContent-Length: " + body.length() + "\r\n\r\n");
			assertThat(client.readUntil("\r\n\r\n", Duration.ofSeconds(5))).startsWith("HTTP/1.1 100 Continue");
			client.send(body);
			assertThat(client.readUntil("chat.completion\"}", Duration.ofSeconds(5))).contains("HTTP/1.1 200");
		}
		assertThat(upstream.received(CHAT)).anyMatch((r) -> r.body().equals(body));
	}

	@Test
	void aThousandClientsThatNeverSendAWholeRequestAreDisconnectedAndTheirDescriptorsFreed() throws Exception {
		upstream.handle((req, res) -> res.status(404).send());
		HealthyStream.script(upstream);
		long baseline = openDescriptors();
		List<RawHttpClient> clients = new ArrayList<>();
		try {
			for (int i = 0; i < 1000; i++) {
				RawHttpClient client = RawHttpClient.connect(this.port, 0);
				clients.add(client);
				if (i % 2 == 0) {
					client.send("POST /v1/chat/comp");
				}
			}
			long peak = openDescriptors();
			HealthyStream healthy = HealthyStream.start(this.port, "m-healthy");
			healthy.assertWhole();
			for (RawHttpClient client : clients) {
				assertThat(client.awaitClosed(Duration.ofSeconds(10))).as("disconnected by the request timeout")
					.isTrue();
			}
			// The first connections may be cut off before the last one opens: at least
			// the clients' ends.
			assertThat(peak - baseline).as("descriptors of the open connections").isGreaterThanOrEqualTo(1000);
		}
		finally {
			clients.forEach(RawHttpClient::close);
		}
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(openDescriptors()).as("descriptors back to the baseline")
				.isLessThanOrEqualTo(baseline + 10));
	}

	private HealthyStream startHealthyStream() {
		HealthyStream.script(upstream);
		return HealthyStream.start(this.port, "m-healthy");
	}

	private void assertEngineRequestCancelled() throws Exception {
		this.engineConnectionClosed.get().get(5, TimeUnit.SECONDS);
	}

	/**
	 * One more request counted under the {@code unknown} model since {@code start} (its
	 * body was never read whole), with the given status and no other.
	 */
	private void assertCountedOnceUnderUnknownModel(PrometheusText start, String status) {
		double before = start.value("tokengap_requests_total", "model_name", "unknown");
		double beforeWithStatus = start.value("tokengap_requests_total", "model_name", "unknown", "status", status);
		await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
			PrometheusText metrics = PrometheusText.scrape(this.managementPort);
			assertThat(metrics.value("tokengap_requests_total", "model_name", "unknown", "status", status)
					- beforeWithStatus)
				.isEqualTo(1);
			assertThat(metrics.value("tokengap_requests_total", "model_name", "unknown") - before).as("no other status")
				.isEqualTo(1);
		});
	}

	private void assertCountedOnceAsCancelled(String model, String status) {
		await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
			PrometheusText metrics = PrometheusText.scrape(this.managementPort);
			assertThat(metrics.value("tokengap_streams_total", "model_name", model, "outcome", "client_cancelled"))
				.isEqualTo(1);
			assertThat(metrics.value("tokengap_streams_total", "model_name", model)).as("no other outcome")
				.isEqualTo(1);
			assertThat(metrics.value("tokengap_requests_total", "model_name", model, "status", status)).isEqualTo(1);
			assertThat(metrics.value("tokengap_inflight_streams", "model_name", model)).as("none left in flight")
				.isZero();
		});
	}

	/** Waits until the engine's written count stops growing for a second. */
	static void awaitStalled(AtomicLong written) {
		long[] last = { -1 };
		await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofSeconds(1)).until(() -> {
			long now = written.get();
			boolean stalled = now > 0 && now == last[0];
			last[0] = now;
			return stalled;
		});
	}

	private static long openDescriptors() {
		try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
			return fds.count();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private static String request(String model) {
		return "{\"model\":\"" + model + "\",\"stream\":true}";
	}

}
