package dev.tokengap.proxy;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.Connection;

import org.springframework.boot.test.context.SpringBootTest;

import dev.tokengap.testsupport.BufferMemory;
import dev.tokengap.testsupport.GeneratedBody;
import dev.tokengap.testsupport.HealthyStream;
import dev.tokengap.testsupport.PrometheusText;
import dev.tokengap.testsupport.RawHttpClient;
import dev.tokengap.testsupport.ScriptedUpstream;
import dev.tokengap.testsupport.ScriptedUpstreamTests;
import dev.tokengap.testsupport.StreamingClient;
import dev.tokengap.testsupport.StreamingClient.Digest;
import dev.tokengap.testsupport.StreamingClient.Recording;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Upstream failures after the response started: the client's stream ends as a failure (no
 * terminating chunk), the outcome is counted, and nothing is made up.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=0", "tokengap.mode=demo", "tokengap.upstream.idle-timeout=500ms",
				"tokengap.upstream.response-timeout=1s",
				"tokengap.metrics.models=m-reset,m-idle,m-nodone,m-slow,m-huge,m-paused,m-healthy" })
class UpstreamFaultIntegrationTests extends ScriptedUpstreamTests {

	@Test
	void aResetMidStreamEndsTheClientStreamAsAFailure() {
		upstream.handle((req, res) -> {
			res.header("content-type", "text/event-stream");
			return res.then()
				.then(ScriptedUpstream.write(res, ScriptedUpstream.chatEvent("one").getBytes()))
				.then(Mono.delay(Duration.ofMillis(50)))
				.then(Mono.fromRunnable(() -> ((Connection) res).channel().close()));
		});
		Recording recording = post("m-reset");
		assertThat(recording.status()).isEqualTo(200);
		assertThat(recording.text()).contains("one").doesNotContain("[DONE]");
		assertThat(recording.failure()).as("the client saw an incomplete body").isNotNull();
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(
					metrics().value("tokengap_streams_total", "model_name", "m-reset", "outcome", "upstream_error"))
				.isEqualTo(1));
	}

	@Test
	void anUpstreamSilentPastTheIdleTimeoutEndsTheStreamAsATimeout() {
		upstream.handle((req, res) -> {
			res.header("content-type", "text/event-stream");
			return res.then()
				.then(ScriptedUpstream.write(res, ScriptedUpstream.chatEvent("one").getBytes()))
				.then(Mono.delay(Duration.ofSeconds(5)))
				.then();
		});
		long start = System.nanoTime();
		Recording recording = post("m-idle");
		Duration took = Duration.ofNanos(System.nanoTime() - start);
		assertThat(recording.text()).contains("one").doesNotContain("[DONE]");
		assertThat(recording.failure()).isNotNull();
		assertThat(took).isLessThan(Duration.ofSeconds(3));
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(
					metrics().value("tokengap_streams_total", "model_name", "m-idle", "outcome", "upstream_timeout"))
				.isEqualTo(1));
	}

	/**
	 * The body is passed on as it is, but a stream that never reached its good end did
	 * not complete: the engine ended it early (contract v2).
	 */
	@Test
	void anUpstreamThatEndsItsBodyWithoutDoneIsPassedOnAsItIsAndIsAnEngineError() {
		upstream.stream(ScriptedUpstream.Step.list(ScriptedUpstream.Step.of(0, ScriptedUpstream.chatEvent("one"))));
		Recording recording = post("m-nodone");
		assertThat(recording.text()).isEqualTo(ScriptedUpstream.chatEvent("one"));
		assertThat(recording.failure()).as("the HTTP body itself ended cleanly").isNull();
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(
					metrics().value("tokengap_streams_total", "model_name", "m-nodone", "outcome", "engine_error"))
				.isEqualTo(1));
		assertThat(metrics().value("tokengap_streams_total", "model_name", "m-nodone", "outcome", "completed"))
			.isZero();
	}

	@Test
	void anEngineSlowerToSendHeadersThanTheResponseTimeoutIsAnsweredGatewayTimeout() throws Exception {
		AtomicReference<CompletableFuture<Void>> engineConnectionClosed = new AtomicReference<>();
		upstream.handle((req, res) -> {
			engineConnectionClosed.set(ScriptedUpstream.closed(res));
			return Mono.delay(Duration.ofSeconds(30)).then(res.status(200).send().then());
		});
		HealthyStream.script(upstream);
		HealthyStream healthy = HealthyStream.start(this.port, "m-healthy");
		long start = System.nanoTime();
		Recording recording = post("m-slow");
		Duration took = Duration.ofNanos(System.nanoTime() - start);
		assertThat(recording.status()).isEqualTo(504);
		assertThat(recording.headers().get("content-type")).isEqualTo("application/json");
		assertThat(recording.text()).isEqualTo("{\"error\":{\"message\":\"The engine sent no response headers within "
				+ "PT1S (tokengap.upstream.response-timeout)\",\"type\":\"GatewayTimeoutError\",\"param\":null,"
				+ "\"code\":504}}");
		assertThat(took).as("answered at the timeout, not the engine's 30 s").isLessThan(Duration.ofSeconds(10));
		engineConnectionClosed.get().get(5, TimeUnit.SECONDS);
		await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
			PrometheusText metrics = metrics();
			assertThat(metrics.value("tokengap_requests_total", "model_name", "m-slow", "status", "504")).isEqualTo(1);
			assertThat(metrics.value("tokengap_requests_total", "model_name", "m-slow")).isEqualTo(1);
		});
		healthy.assertWhole();
	}

	@Test
	void aHundredMegabyteBodyReachesTheClientWholeWhileTokengapHoldsBoundedMemory() throws Exception {
		GeneratedBody body = new GeneratedBody(100L * 1024 * 1024, 64 * 1024);
		upstream.handle((req, res) -> {
			res.header("content-type", "application/json").header("content-length", Long.toString(body.size()));
			return ScriptedUpstream.writeAll(res, body.chunks(), new AtomicLong());
		});
		HealthyStream.script(upstream);
		HealthyStream healthy = HealthyStream.start(this.port, "m-healthy");
		Digest digest;
		long peak;
		try (BufferMemory memory = BufferMemory.sample()) {
			digest = StreamingClient.digest("http://127.0.0.1:" + this.port + "/v1/chat/completions",
					"{\"model\":\"m-huge\"}");
			peak = memory.peakGrowth();
		}
		System.out.printf("100 MB body: peak buffer memory %d bytes above the baseline%n", peak);
		assertThat(digest.failure()).isNull();
		assertThat(digest.status()).isEqualTo(200);
		assertThat(digest.length()).isEqualTo(body.size());
		assertThat(digest.crc32()).isEqualTo(body.checksum());
		assertThat(peak).as("a body aggregated anywhere would hold 100 MB").isLessThan(16L * 1024 * 1024);
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(
					metrics().value("tokengap_requests_total", "model_name", "m-huge", "status", "200"))
				.isEqualTo(1));
		healthy.assertWhole();
	}

	@Test
	void anEngineHeldBackByAClientPausedLongerThanTheIdleTimeoutIsNotTimedOut() {
		AtomicLong written = new AtomicLong();
		upstream.handle((req, res) -> {
			res.header("content-type", "text/event-stream");
			return ScriptedUpstream.writeAll(res,
					ScriptedUpstream.chatEvents(16L * 1024 * 1024).concatWith(Flux.just("data: [DONE]\n\n".getBytes())),
					written);
		});
		try (RawHttpClient client = RawHttpClient.connect(this.port, 16 * 1024)) {
			client.send(RawHttpClient.post("/v1/chat/completions", "{\"model\":\"m-paused\",\"stream\":true}"));
			client.readUntil("data: ", Duration.ofSeconds(5));
			// The engine's writes stall for over a second, twice the idle timeout:
			// backpressure.
			ClientFaultIntegrationTests.awaitStalled(written);
			assertThat(written.get()).as("the engine is held back").isLessThan(16L * 1024 * 1024);
			String body = client.readUntil("data: [DONE]\n\n\r\n0\r\n\r\n", Duration.ofSeconds(15));
			assertThat(body).as("every byte, then the body's clean end")
				.hasSizeGreaterThan(16 * 1024 * 1024 - 16 * 1024);
		}
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(
					metrics().value("tokengap_streams_total", "model_name", "m-paused", "outcome", "completed"))
				.isEqualTo(1));
	}

	private PrometheusText metrics() {
		return PrometheusText.scrape(this.managementPort);
	}

	private Recording post(String model) {
		return StreamingClient.record("http://127.0.0.1:" + this.port + "/v1/chat/completions",
				"{\"model\":\"" + model + "\",\"stream\":true}");
	}

}
