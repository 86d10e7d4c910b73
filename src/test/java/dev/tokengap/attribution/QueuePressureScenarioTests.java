package dev.tokengap.attribution;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.test.context.SpringBootTest;

import dev.tokengap.testsupport.StreamingClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One long-context stream fills more than 90% of a small KV cache, so two more requests
 * wait for capacity (blocks) behind it and a third is refused by the admission limit
 * ({@code max-num-queued-reqs=2}). The running stream's KV never outgrows the cache, so
 * nobody is preempted; six engine stalls lengthen its steps while the queue waits. No
 * other stream decodes beside it, so tokengap cannot tell a hiccup of the engine from its
 * state, and names the state: requests waiting for capacity beside a full KV cache (with
 * other streams sharing such a stall it is a hiccup, {@code engine_other}, as
 * {@link MixedKvPressureScenarioTests} judges it). The queue waits for the whole
 * scenario, so a host hiccup that delays an event from the simulator's HTTP layer would
 * be blamed on it as well: the 400 ms floor keeps such hiccups of a loaded test machine
 * (about 300 ms seen) out of the score, the stalls' gaps are over 500 ms.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=0", "tokengap.mode=demo", "tokengap.demo.load=false",
				"tokengap.backend.scrape-interval=400ms", "tokengap.backend.scrape-timeout=350ms",
				"tokengap.attribution.spike-floor=400ms", "tokengap.sim.step-fixed-cost=20ms",
				"tokengap.sim.block-size=16", "tokengap.sim.num-kv-blocks=400", "tokengap.sim.max-model-len=6000",
				"tokengap.sim.max-num-queued-reqs=2" })
class QueuePressureScenarioTests extends ScenarioSupport {

	/**
	 * 5,775 prompt tokens: 361 of the 400 blocks (over 90%), 374 after 200 output tokens.
	 */
	static final int HOLDER_CHARS = 23_100;

	/** 1,000 prompt tokens: 63 blocks, more than the running stream ever leaves free. */
	static final int WAITER_CHARS = 4_000;

	static final String STALLS = "30:500,60:500,90:500,120:500,150:500,180:500";

	@Test
	void requestsWaitingForCapacityBesideAFullKvCacheAreQueuePressure() throws Exception {
		warmUp();
		List<Mono<Void>> streams = new ArrayList<>();
		streams.add(start(Request.of("queue-holder", HOLDER_CHARS, 200).with("X-Sim-Engine-Stall", STALLS)));
		Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> this.simulator.engine().running() == 1);
		for (int i = 0; i < 2; i++) {
			streams.add(start(Request.of("queue-waiter-" + i, WAITER_CHARS, 20)));
		}
		Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> this.simulator.engine().waiting() == 2);
		assertThat(this.simulator.engine().kvCacheUsage()).isGreaterThan(0.9);
		assertThat(postThroughTokengap(Request.of("queue-refused", WAITER_CHARS, 20)))
			.as("the admission limit's answer, through tokengap")
			.isEqualTo(503);
		awaitAll(streams);
		assertThat(this.simulator.engine().preemptions()).isZero();
		assertAccurate("queue_pressure", SpikeCause.QUEUE_PRESSURE, this::truthWithQueue, 6);
		assertThat(spikes()).filteredOn((spike) -> spike.cause().equals(SpikeCause.QUEUE_PRESSURE.label()))
			.allSatisfy((spike) -> assertThat(spike.evidence().waitingForCapacityMax()).isPositive())
			.allSatisfy((spike) -> assertThat(spike.scope()).isEqualTo(SpikeScope.ALONE.label()));
	}

	private int postThroughTokengap(Request request) {
		String body = "{\"model\":\"" + MODEL + "\",\"stream\":true,\"max_tokens\":" + request.maxTokens()
				+ ",\"messages\":[{\"role\":\"user\",\"content\":\"" + request.prompt() + "\"}]}";
		return StreamingClient.at("http://127.0.0.1:" + this.port, Duration.ofSeconds(10))
			.post("/v1/chat/completions", body)
			.whole()
			.status();
	}

}
