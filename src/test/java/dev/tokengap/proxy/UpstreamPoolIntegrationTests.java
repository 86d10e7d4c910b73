package dev.tokengap.proxy;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.boot.test.context.SpringBootTest;

import dev.tokengap.testsupport.ScriptedUpstream;
import dev.tokengap.testsupport.ScriptedUpstreamTests;
import dev.tokengap.testsupport.StreamingClient;
import dev.tokengap.testsupport.StreamingClient.Recording;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The engine connection pools: a burst opens many connections, and once they are idle
 * longer than {@code tokengap.upstream.max-idle-time} they are closed by the background
 * sweep, not only when next acquired (which never comes after a burst).
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=0", "tokengap.mode=demo", "tokengap.upstream.max-idle-time=500ms" })
class UpstreamPoolIntegrationTests extends ScriptedUpstreamTests {

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

}
