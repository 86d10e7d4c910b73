package dev.tokengap.proxy;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.boot.test.context.SpringBootTest;

import dev.tokengap.testsupport.EnginePoolSeries;
import dev.tokengap.testsupport.PrometheusText;
import dev.tokengap.testsupport.ScriptedUpstream;
import dev.tokengap.testsupport.ScriptedUpstreamTests;
import dev.tokengap.testsupport.StreamingClient;
import dev.tokengap.testsupport.StreamingClient.Recording;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The engine connection pools: a burst opens many connections, and once they are idle
 * longer than {@code tokengap.upstream.max-idle-time} they are closed by the background
 * sweep, not only when next acquired (which never comes after a burst).
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = { "management.server.port=0",
		"tokengap.mode=demo", "tokengap.upstream.max-idle-time=500ms", "tokengap.upstream.max-connections=1000" })
class UpstreamPoolIntegrationTests extends ScriptedUpstreamTests {

	private String poolId;

	@Test
	void closesTheIdleConnectionsOfABurstAfterMaxIdleTime() throws Exception {
		List<CompletableFuture<Void>> closed = new CopyOnWriteArrayList<>();
		upstream.handle((req, res) -> {
			closed.add(ScriptedUpstream.closed(res));
			// Held long enough that the burst needs a connection per request.
			return Mono.delay(Duration.ofMillis(300))
				.then(res.status(200).header("content-type", "application/json").sendString(Mono.just("{}")).then());
		});
		List<Recording> answers = Flux.fromStream(IntStream.range(0, 20).boxed())
			.flatMap((i) -> Mono
				.fromCallable(() -> StreamingClient.record("http://127.0.0.1:" + this.port + "/v1/chat/completions",
						"{\"model\":\"m-pool\"}"))
				.subscribeOn(Schedulers.boundedElastic()), 20)
			.collectList()
			.block(Duration.ofSeconds(30));
		assertThat(answers).hasSize(20).allSatisfy((answer) -> assertThat(answer.status()).isEqualTo(200));
		assertThat(closed).hasSizeGreaterThanOrEqualTo(10);
		CompletableFuture.allOf(closed.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);
	}

	/**
	 * The pool's own metrics, Reactor Netty's, on the management port: its bound, and the
	 * connections a held burst made active, then idle, and the time to acquire one.
	 */
	@Test
	void exportsThePoolsActiveIdlePendingAndAcquireTimeOnTheManagementPort() {
		upstream.handle((req, res) -> Mono.delay(Duration.ofMillis(200))
			.then(res.status(200).header("content-type", "application/json").sendString(Mono.just("{}")).then()));
		Flux<Recording> burst = Flux.range(0, 6)
			.flatMap((i) -> Mono
				.fromCallable(() -> StreamingClient.record("http://127.0.0.1:" + this.port + "/v1/chat/completions",
						"{\"model\":\"m-pool\"}"))
				.subscribeOn(Schedulers.boundedElastic()), 6);
		// The test JVM keeps other applications' pools, all in Micrometer's global
		// registry:
		// this one is told apart by its bound, and then by its id.
		this.poolId = PrometheusText.scrape(this.managementPort)
			.matching("reactor_netty_connection_provider_max_connections", "name", UpstreamClient.POOL_NAME)
			.stream()
			.filter((sample) -> sample.value() == 1000)
			.map((sample) -> sample.labels().get("id"))
			.findFirst()
			.orElseThrow(() -> new AssertionError("no pool with this application's max-connections"));
		AtomicReference<Double> activeDuringBurst = new AtomicReference<>(0.0);
		Disposable watch = Flux.interval(Duration.ofMillis(20))
			.map((tick) -> pool("reactor_netty_connection_provider_active_connections"))
			.subscribe((active) -> activeDuringBurst.accumulateAndGet(active, Math::max));
		try {
			assertThat(burst.collectList().block(Duration.ofSeconds(30))).hasSize(6);
		}
		finally {
			watch.dispose();
		}
		assertThat(activeDuringBurst.get()).as("connections in use while the burst was held").isPositive();
		assertThat(pool("reactor_netty_connection_provider_max_connections")).isEqualTo(1000);
		assertThat(pool("reactor_netty_connection_provider_pending_connections")).isZero();
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(pool("reactor_netty_connection_provider_active_connections")).isZero());
		PrometheusText metrics = PrometheusText.scrape(this.managementPort);
		assertThat(EnginePoolSeries.NAMES).as("every pool series the README, rules and dashboards name")
			.allSatisfy(
					(name) -> assertThat(metrics.matching(name, "name", UpstreamClient.POOL_NAME, "id", this.poolId))
						.as(name)
						.isNotEmpty());
		assertThat(metrics.matching("reactor_netty_connection_provider_idle_connections", "name",
				UpstreamClient.POOL_NAME, "id", this.poolId))
			.isNotEmpty();
		assertThat(metrics.matching("reactor_netty_connection_provider_pending_connections_time_seconds_count", "name",
				UpstreamClient.POOL_NAME, "status", "SUCCESS"))
			.as("the time requests waited for a connection (UpstreamSaturationIntegrationTests sees one wait)")
			.isNotEmpty();
	}

	private double pool(String name) {
		return PrometheusText.scrape(this.managementPort)
			.value(name, "name", UpstreamClient.POOL_NAME, "id", this.poolId);
	}

}
