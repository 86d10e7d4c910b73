package dev.tokengap.proxy;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.beans.factory.annotation.Autowired;
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
 * The engine connection pools, one per event loop: a burst opens many connections, and
 * once they are idle longer than {@code tokengap.upstream.max-idle-time} they are closed
 * by the background sweep, not only when next acquired (which never comes after a burst).
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = { "management.server.port=0",
		"tokengap.mode=demo", "tokengap.upstream.max-idle-time=500ms", "tokengap.upstream.max-connections=1000" })
class UpstreamPoolIntegrationTests extends ScriptedUpstreamTests {

	@Autowired
	private UpstreamClient upstreamClient;

	private Set<String> poolIds;

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
		// A connection of its own per request, spread over the event loops: every loop's
		// pool serves some.
		int requests = Math.max(6, 2 * this.upstreamClient.loops());
		Flux<Recording> burst = Flux.range(0, requests)
			.flatMap((i) -> Mono
				.fromCallable(() -> StreamingClient.record("http://127.0.0.1:" + this.port + "/v1/chat/completions",
						"{\"model\":\"m-pool\"}"))
				.subscribeOn(Schedulers.boundedElastic()), requests);
		// The test JVM keeps other applications' pools, all in Micrometer's global
		// registry: this one's, one per event loop, are told apart by their bounds
		// (shares of max-connections), and then by their ids.
		this.poolIds = ConcurrentHashMap.newKeySet();
		this.poolIds.addAll(poolIds(PrometheusText.scrape(this.managementPort)));
		assertThat(this.poolIds).as("a pool with a share of this application's max-connections").isNotEmpty();
		AtomicReference<Double> activeDuringBurst = new AtomicReference<>(0.0);
		Disposable watch = Flux.interval(Duration.ofMillis(20))
			.map((tick) -> pool("reactor_netty_connection_provider_active_connections"))
			.subscribe((active) -> activeDuringBurst.accumulateAndGet(active, Math::max));
		try {
			assertThat(burst.collectList().block(Duration.ofSeconds(30))).hasSize(requests);
		}
		finally {
			watch.dispose();
		}
		// The pools of the loops that had served no request yet have their series now.
		this.poolIds.addAll(poolIds(PrometheusText.scrape(this.managementPort)));
		assertThat(this.poolIds).as("one pool per event loop, told apart by id").hasSize(this.upstreamClient.loops());
		assertThat(activeDuringBurst.get()).as("connections in use while the burst was held").isPositive();
		assertThat(pool("reactor_netty_connection_provider_max_connections")).isEqualTo(1000);
		assertThat(pool("reactor_netty_connection_provider_pending_connections")).isZero();
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(pool("reactor_netty_connection_provider_active_connections")).isZero());
		PrometheusText metrics = PrometheusText.scrape(this.managementPort);
		for (String poolId : this.poolIds) {
			assertThat(EnginePoolSeries.NAMES).as("every pool series the README, rules and dashboards name")
				.allSatisfy((name) -> assertThat(metrics.matching(name, "name", UpstreamClient.POOL_NAME, "id", poolId))
					.as(name)
					.isNotEmpty());
			assertThat(metrics.matching("reactor_netty_connection_provider_idle_connections", "name",
					UpstreamClient.POOL_NAME, "id", poolId))
				.isNotEmpty();
		}
		assertThat(metrics.matching("reactor_netty_connection_provider_pending_connections_time_seconds_count", "name",
				UpstreamClient.POOL_NAME, "status", "SUCCESS"))
			.as("the time requests waited for a connection (UpstreamSaturationIntegrationTests sees one wait)")
			.isNotEmpty();
	}

	/** The sum over this application's pools, those seen so far included. */
	private double pool(String name) {
		PrometheusText metrics = PrometheusText.scrape(this.managementPort);
		this.poolIds.addAll(poolIds(metrics));
		return this.poolIds.stream()
			.mapToDouble((poolId) -> metrics.value(name, "name", UpstreamClient.POOL_NAME, "id", poolId))
			.sum();
	}

	/** The ids of the pools whose bound is a share of this application's. */
	private List<String> poolIds(PrometheusText metrics) {
		Set<Integer> shares = Arrays.stream(UpstreamClient.shares(1000, this.upstreamClient.loops()))
			.boxed()
			.collect(Collectors.toSet());
		return metrics.matching("reactor_netty_connection_provider_max_connections", "name", UpstreamClient.POOL_NAME)
			.stream()
			.filter((sample) -> shares.contains((int) sample.value()))
			.map((sample) -> sample.labels().get("id"))
			.toList();
	}

}
