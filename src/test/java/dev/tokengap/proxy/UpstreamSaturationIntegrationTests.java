package dev.tokengap.proxy;

import java.time.Duration;
import java.util.List;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.boot.test.context.SpringBootTest;

import dev.tokengap.testsupport.PrometheusText;
import dev.tokengap.testsupport.ScriptedUpstream;
import dev.tokengap.testsupport.ScriptedUpstream.Step;
import dev.tokengap.testsupport.ScriptedUpstreamTests;
import dev.tokengap.testsupport.StreamingClient;
import dev.tokengap.testsupport.StreamingClient.Recording;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A full engine connection pool says what it is: tokengap's own limit answered 503 within
 * {@code tokengap.upstream.pending-acquire-timeout}, naming the setting, outcome
 * {@code rejected}; not a 504 after Reactor Netty's 45 s. The pool's own metrics count
 * each wait that timed out.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=0", "tokengap.mode=demo", "tokengap.upstream.max-connections=1",
				"tokengap.upstream.pending-acquire-timeout=300ms", "tokengap.metrics.models=m-full" })
class UpstreamSaturationIntegrationTests extends ScriptedUpstreamTests {

	/**
	 * More clients than event loops: at least two share a loop, and so its one
	 * connection.
	 */
	private static final int CLIENTS = 8;

	@Test
	void aRequestThatFindsEveryEngineConnectionBusyIsRejectedWith503() {
		upstream.handle((req, res) -> ScriptedUpstream.play(res,
				Step.list(Step.of(1500, ScriptedUpstream.chatEvent("late")), Step.of(0, "data: [DONE]\n\n")),
				(nanos) -> {
				}));
		List<Recording> answers = Flux.fromStream(IntStream.range(0, CLIENTS).boxed())
			.flatMap(
					(i) -> Mono
						.fromCallable(
								() -> StreamingClient.record("http://127.0.0.1:" + this.port + "/v1/chat/completions",
										"{\"model\":\"m-full\",\"stream\":true}"))
						.subscribeOn(Schedulers.boundedElastic()),
					CLIENTS)
			.collectList()
			.block(Duration.ofSeconds(30));
		List<Recording> refused = answers.stream().filter((a) -> a.status() == 503).toList();
		assertThat(refused).as("answers: %s", answers.stream().map(Recording::status).toList()).isNotEmpty();
		assertThat(answers).allSatisfy((a) -> assertThat(a.status()).isIn(200, 503));
		assertThat(refused).allSatisfy((a) -> assertThat(a.text()).contains("ServiceUnavailableError")
			.contains("tokengap.upstream.max-connections")
			.contains("tokengap.upstream.pending-acquire-timeout"));
		await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
			PrometheusText metrics = PrometheusText.scrape(this.managementPort);
			assertThat(metrics.value("tokengap_streams_total", "model_name", "m-full", "outcome", "rejected"))
				.isEqualTo(refused.size());
			assertThat(metrics.value("tokengap_streams_total", "model_name", "m-full", "outcome", "completed"))
				.isEqualTo(CLIENTS - refused.size());
			assertThat(metrics.value("reactor_netty_connection_provider_pending_connections_time_seconds_count", "name",
					UpstreamClient.POOL_NAME, "status", "ERROR"))
				.as("the pool's own count of the waits that timed out")
				.isEqualTo(refused.size());
		});
	}

}
