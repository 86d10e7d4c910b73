package dev.tokengap.proxy;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

import org.springframework.boot.test.context.SpringBootTest;

import dev.tokengap.testsupport.PrometheusText;
import dev.tokengap.testsupport.RawHttpClient;
import dev.tokengap.testsupport.ScriptedUpstream;
import dev.tokengap.testsupport.ScriptedUpstreamTests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code tokengap.proxy.send-timeout}: a client that stops reading cannot hold the engine
 * (and its KV cache) without bound, while a client that reads slowly keeps its stream.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=0", "tokengap.mode=demo", "tokengap.proxy.send-timeout=2s",
				"tokengap.proxy.client-send-buffer=16KB", "tokengap.metrics.models=m-stopped,m-slow-reader" })
class SendTimeoutIntegrationTests extends ScriptedUpstreamTests {

	private static final long BODY = 8L * 1024 * 1024;

	@Test
	void aClientThatStopsReadingIsClosedAfterTheSendTimeoutAndTheEngineRequestCancelled() throws Exception {
		AtomicReference<CompletableFuture<Void>> engineClosed = new AtomicReference<>();
		script(engineClosed, new AtomicLong());
		long stoppedAt;
		try (RawHttpClient client = RawHttpClient.connect(this.port, 16 * 1024)) {
			client.send(RawHttpClient.post("/v1/chat/completions", "{\"model\":\"m-stopped\",\"stream\":true}"));
			client.readUntil("data: ", Duration.ofSeconds(5));
			stoppedAt = System.nanoTime();
			// Never reads again: tokengap's socket fills and accepts nothing more.
			engineClosed.get().get(15, TimeUnit.SECONDS);
		}
		Duration held = Duration.ofNanos(System.nanoTime() - stoppedAt);
		assertThat(held).as("engine request held after the client stopped").isLessThan(Duration.ofSeconds(8));
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(
					metrics().value("tokengap_streams_total", "model_name", "m-stopped", "outcome", "client_cancelled"))
				.isEqualTo(1));
		assertThat(metrics().value("tokengap_inflight_streams", "model_name", "m-stopped")).isZero();
		assertThat(metrics().value("tokengap_streams_total", "model_name", "m-stopped")).isEqualTo(1);
	}

	@Test
	void aClientThatReadsSlowlyButSteadilyKeepsItsStreamPastTheSendTimeout() throws Exception {
		AtomicReference<CompletableFuture<Void>> engineClosed = new AtomicReference<>();
		AtomicLong written = new AtomicLong();
		script(engineClosed, written);
		try (RawHttpClient client = RawHttpClient.connect(this.port, 16 * 1024)) {
			client.send(RawHttpClient.post("/v1/chat/completions", "{\"model\":\"m-slow-reader\",\"stream\":true}"));
			client.readUntil("data: ", Duration.ofSeconds(5));
			long until = System.nanoTime() + Duration.ofSeconds(5).toNanos();
			while (System.nanoTime() < until) {
				// 8 KB every 100 ms: far slower than the engine, but the socket takes
				// bytes every few hundred milliseconds once the kernel's buffers drain,
				// never silent for 2 s.
				assertThat(client.readWithin(Duration.ofMillis(50))).isNotNegative();
				Thread.sleep(100);
			}
			assertThat(engineClosed.get()).as("the engine request is still served").isNotDone();
			String body = client.readUntil("data: [DONE]\n\n\r\n0\r\n\r\n", Duration.ofSeconds(30));
			assertThat(body).hasSizeGreaterThan((int) BODY - 16 * 1024);
		}
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(
					metrics().value("tokengap_streams_total", "model_name", "m-slow-reader", "outcome", "completed"))
				.isEqualTo(1));
	}

	private static void script(AtomicReference<CompletableFuture<Void>> engineClosed, AtomicLong written) {
		upstream.handle((req, res) -> {
			engineClosed.set(ScriptedUpstream.closed(res));
			res.header("content-type", "text/event-stream");
			return ScriptedUpstream.writeAll(res,
					ScriptedUpstream.chatEvents(BODY).concatWith(Flux.just("data: [DONE]\n\n".getBytes())), written);
		});
	}

	private PrometheusText metrics() {
		return PrometheusText.scrape(this.managementPort);
	}

}
