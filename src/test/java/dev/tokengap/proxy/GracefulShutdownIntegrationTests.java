package dev.tokengap.proxy;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

import dev.tokengap.TokengapApplication;
import dev.tokengap.testsupport.HealthyStream;
import dev.tokengap.testsupport.PrometheusText;
import dev.tokengap.testsupport.ScriptedUpstream;
import dev.tokengap.testsupport.StreamingClient;
import dev.tokengap.testsupport.StreamingClient.Recording;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * On shutdown (what SIGTERM triggers) a stream in flight finishes, whole, within the
 * drain time; one that would outlast the drain is ended when it expires.
 */
class GracefulShutdownIntegrationTests {

	@Test
	void letsAStreamInFlightFinishOnShutdown() throws Exception {
		ConfigurableApplicationContext context = SpringApplication.run(TokengapApplication.class, "--server.port=0",
				"--management.server.port=0", "--tokengap.mode=demo", "--tokengap.demo.load=false",
				"--tokengap.sim.step-fixed-cost=20ms", "--tokengap.shutdown.drain-timeout=20s");
		int port = ((WebServerApplicationContext) context).getWebServer().getPort();
		CompletableFuture<Recording> stream = CompletableFuture
			.supplyAsync(() -> StreamingClient.record("http://127.0.0.1:" + port + "/v1/chat/completions",
					"{\"model\":\"sim-llama-3-8b\",\"stream\":true,"
							+ "\"max_tokens\":100,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"));
		// Let the stream start,
		// then shut down while it is in flight (about 2 s of tokens left).
		await().atMost(Duration.ofSeconds(10))
			.until(() -> context.getBean(dev.tokengap.sim.SimulatorServer.class).engine().running() == 1);
		long closing = System.nanoTime();
		context.close();
		Recording recording = stream.get();
		assertThat(recording.status()).isEqualTo(200);
		assertThat(recording.text()).endsWith("data: [DONE]\n\n");
		long contentEvents = recording.text()
			.lines()
			.filter((line) -> line.contains("\"content\":\"") && !line.contains("\"content\":\"\""))
			.count();
		assertThat(contentEvents).isEqualTo(100);
		double waited = (System.nanoTime() - closing) / 1e9;
		System.out.printf("shutdown waited %.1f s for the stream%n", waited);
		assertThat(waited).as("no longer than the stream needed").isLessThan(10);
	}

	@Test
	void endsAStreamLongerThanTheDrainWhenItExpiresAndRefusesNewConnectionsMeanwhile() throws Exception {
		try (ScriptedUpstream engine = ScriptedUpstream.start()) {
			AtomicReference<CompletableFuture<Void>> engineConnectionClosed = scriptEndlessStream(engine);
			HealthyStream.script(engine);
			ConfigurableApplicationContext context = SpringApplication.run(TokengapApplication.class, "--server.port=0",
					"--management.server.port=0", "--tokengap.upstream.url=" + engine.url(),
					"--tokengap.backend.enabled=false", "--tokengap.metrics.models=m-endless,m-healthy",
					"--tokengap.shutdown.drain-timeout=2s");
			PrometheusRegistry registry = context.getBean(PrometheusRegistry.class);
			int port = ((WebServerApplicationContext) context).getWebServer().getPort();
			CompletableFuture<Recording> endless = CompletableFuture
				.supplyAsync(() -> StreamingClient.record("http://127.0.0.1:" + port + "/v1/chat/completions",
						"{\"model\":\"m-endless\",\"stream\":true}"));
			await().atMost(Duration.ofSeconds(10)).until(() -> engineConnectionClosed.get() != null);
			HealthyStream healthy = HealthyStream.start(port, "m-healthy");
			await().atMost(Duration.ofSeconds(10)).until(() -> !engine.received(HealthyStream.PATH).isEmpty());
			long closing = System.nanoTime();
			CompletableFuture<Void> closed = CompletableFuture.runAsync(context::close);
			await().atMost(Duration.ofSeconds(5))
				.pollInterval(Duration.ofMillis(50))
				.until(() -> refusesConnections(port));
			assertThat(endless).as("the long stream is still draining").isNotDone();
			assertCutWhenTheDrainExpired(endless.get(20, TimeUnit.SECONDS), (System.nanoTime() - closing) / 1e9);
			healthy.assertWhole();
			engineConnectionClosed.get().get(5, TimeUnit.SECONDS);
			closed.get(20, TimeUnit.SECONDS);
			assertCountedOnce(PrometheusText.scrape(registry));
		}
	}

	/** An engine that streams an event every 100 ms for ever. */
	private static AtomicReference<CompletableFuture<Void>> scriptEndlessStream(ScriptedUpstream engine) {
		AtomicReference<CompletableFuture<Void>> connectionClosed = new AtomicReference<>();
		engine.handle((req, res) -> {
			connectionClosed.set(ScriptedUpstream.closed(res));
			res.header("content-type", "text/event-stream");
			Flux<byte[]> endless = Flux.interval(Duration.ofMillis(100))
				.map((i) -> ScriptedUpstream.chatEvent("t" + i).getBytes());
			return ScriptedUpstream.writeAll(res, endless, new AtomicLong());
		});
		return connectionClosed;
	}

	private static void assertCutWhenTheDrainExpired(Recording recording, double endedSeconds) {
		System.out.printf("shutdown ended the endless stream after %.1f s%n", endedSeconds);
		assertThat(recording.status()).isEqualTo(200);
		assertThat(recording.text()).contains("t0").doesNotContain("[DONE]");
		assertThat(recording.failure()).as("an incomplete body, never a clean end").isNotNull();
		assertThat(endedSeconds).as("the 2 s drain was waited for, and no longer than needed").isBetween(1.5, 10.0);
	}

	private static void assertCountedOnce(PrometheusText metrics) {
		assertThat(metrics.value("tokengap_streams_total", "model_name", "m-endless")).as("counted once").isEqualTo(1);
		assertThat(metrics.value("tokengap_streams_total", "model_name", "m-endless", "outcome", "completed"))
			.as("a stream cut short is never counted complete")
			.isZero();
		assertThat(metrics.value("tokengap_streams_total", "model_name", "m-healthy", "outcome", "completed"))
			.isEqualTo(1);
	}

	private static boolean refusesConnections(int port) {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress("127.0.0.1", port), 1000);
			return false;
		}
		catch (ConnectException ex) {
			return true;
		}
		catch (IOException ex) {
			return false;
		}
	}

}
