package dev.tokengap.sim;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

import dev.tokengap.testsupport.StreamingClient;

import static dev.tokengap.sim.FastSimulator.CHAT;
import static dev.tokengap.sim.FastSimulator.chatBody;
import static dev.tokengap.sim.SimEngineTests.contentEvents;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

class FaultInjectionTests extends FreshSimulatorTests {

	private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

	@Test
	void httpStallHoldsOneEventWhileTheEngineRunsOn() {
		StreamingClient.Exchange exchange = this.client.post(CHAT, chatBody("hold it", 15),
				Map.of(FaultHeaders.HTTP_STALL, "5:300", "X-Request-Id", "held"));
		List<StreamingClient.Event> tokens = contentEvents(exchange.events());
		List<TraceEntry> trace = this.server.engine().trace("held");
		assertThat(tokens).hasSize(15);
		assertThat(trace).hasSize(15).noneMatch(TraceEntry::injectedStall).noneMatch(TraceEntry::preempted);
		long clientGap = tokens.get(5).nanos() - tokens.get(4).nanos();
		assertThat(clientGap).isGreaterThanOrEqualTo(290 * MS);
		assertThat(clientGap - trace.get(5).sincePreviousTokenNanos()).as("the engine did not see the hold")
			.isGreaterThanOrEqualTo(250 * MS);
		assertThat(tokens.get(14).nanos() - tokens.get(5).nanos()).as("later tokens queued behind it")
			.isLessThan(trace.get(14).stepEndNanos() - trace.get(5).stepEndNanos());
	}

	@Test
	void engineStallLengthensTheStepForEveryStreamInIt() {
		List<StreamingClient.Event> bystander = new CopyOnWriteArrayList<>();
		Disposable bystanderStream = this.client
			.stream(CHAT, chatBody("bystander", 5000), Map.of("X-Request-Id", "bystander"))
			.subscribe(bystander::add);
		try {
			await().atMost(Duration.ofSeconds(5)).until(() -> this.server.engine().trace("bystander").size() >= 3);
			this.client.post(CHAT, chatBody("stall me", 20),
					Map.of(FaultHeaders.ENGINE_STALL, "10:300", "X-Request-Id", "stalled"));
			TraceEntry stalled = this.server.engine().trace("stalled").get(10);
			assertThat(stalled.injectedStall()).isTrue();
			assertThat(stalled.stepDurationNanos()).isGreaterThanOrEqualTo(300 * MS);
			List<TraceEntry> bystanderTrace = this.server.engine().trace("bystander");
			TraceEntry felt = bystanderTrace.stream()
				.filter((entry) -> entry.stepId() == stalled.stepId())
				.findFirst()
				.orElseThrow();
			assertThat(felt.injectedStall()).isTrue();
			assertThat(felt.sincePreviousTokenNanos()).isGreaterThanOrEqualTo(300 * MS);
			assertThat(bystanderTrace).filteredOn(TraceEntry::injectedStall).hasSize(1);
			await().atMost(Duration.ofSeconds(5)).until(() -> contentEvents(bystander).size() > felt.tokenIndex());
			List<StreamingClient.Event> tokens = contentEvents(bystander);
			assertThat(tokens.get(felt.tokenIndex()).nanos() - tokens.get(felt.tokenIndex() - 1).nanos())
				.isGreaterThanOrEqualTo(290 * MS);
		}
		finally {
			bystanderStream.dispose();
		}
	}

	@Test
	void resetAfterClosesTheConnectionAfterThatTokenWithoutDone() {
		StreamingClient.Exchange exchange = this.client.post(CHAT, chatBody("reset me", 20),
				Map.of(FaultHeaders.RESET_AFTER, "3"));
		assertThat(exchange.status()).isEqualTo(200);
		assertThat(exchange.error()).isNotNull();
		assertThat(exchange.events()).hasSize(1 + 4).noneMatch(StreamingClient.Event::done);
		assertThat(exchange.events().get(4).json().path("choices").path(0).path("finish_reason").isNull()).isTrue();
		assertThat(exchange.body()).endsWith("\n\n");
		await().atMost(Duration.ofSeconds(1)).until(() -> this.server.engine().running() == 0);
	}

	@Test
	void resetAfterTheLastTokenStillWritesNoDone() {
		StreamingClient.Exchange exchange = this.client.post(CHAT, chatBody("reset me", 3),
				Map.of(FaultHeaders.RESET_AFTER, "2"));
		assertThat(exchange.error()).isNotNull();
		assertThat(exchange.events()).hasSize(1 + 3).noneMatch(StreamingClient.Event::done);
	}

}
