package dev.tokengap.proxy;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

import dev.tokengap.TokengapApplication;
import dev.tokengap.testsupport.StreamingClient;
import dev.tokengap.testsupport.StreamingClient.Recording;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * On shutdown (what SIGTERM triggers) a stream in flight finishes, whole, within the drain time.
 */
class GracefulShutdownIntegrationTests {

	@Test
	void letsAStreamInFlightFinishOnShutdown() throws Exception {
		ConfigurableApplicationContext context = SpringApplication.run(TokengapApplication.class, "--server.port=0",
				"--management.server.port=0", "--tokengap.demo.load=false", "--tokengap.sim.step-fixed-cost=20ms",
				"--tokengap.shutdown.drain-timeout=20s");
		int port = ((WebServerApplicationContext) context).getWebServer().getPort();
		CompletableFuture<Recording> stream = CompletableFuture.supplyAsync(() -> StreamingClient
			.post("http://127.0.0.1:" + port + "/v1/chat/completions", "{\"model\":\"sim-llama-3-8b\",\"stream\":true,"
					+ "\"max_tokens\":100,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"));
		// Let the stream start, then shut down while it is in flight (about 2 s of tokens left).
		org.awaitility.Awaitility.await()
			.atMost(Duration.ofSeconds(10))
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

}
