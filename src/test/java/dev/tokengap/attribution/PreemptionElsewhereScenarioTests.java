package dev.tokengap.attribution;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.test.context.SpringBootTest;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A preemption the gauges pin on the wrong stream, and the engine's per-request
 * preemption histogram ({@code vllm:request_num_preemptions}) that sets it right.
 *
 * <p>
 * One long-context stream through tokengap holds 363 of 400 KV blocks; another client of
 * the engine, past tokengap, takes the remaining 37. When the stream needs its next block
 * the engine preempts the other request (the one admitted last), which then waits for
 * capacity beside a KV cache over 90% full until the stream ends. Three engine stalls
 * around that preemption (tokens 34 to 36) and two later ones lengthen the stream's
 * steps, in which it runs alone beside the queue: the simulator's truth is queue
 * pressure. No other stream decodes through tokengap, so a preemption counter that rose
 * in a gap's window is taken for the stream's own preemption. Once the stream has ended,
 * the histogram's count rose by one (this request) and its sum by nothing: the engine
 * never preempted it, and the stall is what else matched, queue pressure.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=0", "tokengap.mode=demo", "tokengap.demo.load=false",
				"tokengap.backend.scrape-interval=400ms", "tokengap.backend.scrape-timeout=350ms",
				"tokengap.attribution.spike-floor=400ms", "tokengap.sim.step-fixed-cost=20ms",
				"tokengap.sim.block-size=16", "tokengap.sim.num-kv-blocks=400", "tokengap.sim.max-model-len=6000" })
class PreemptionElsewhereScenarioTests extends ScenarioSupport {

	/** 5,775 prompt tokens: 361 blocks, 363 by its token 20, 364 from its token 34. */
	static final int HOLDER_CHARS = QueuePressureScenarioTests.HOLDER_CHARS;

	/**
	 * 577 prompt tokens: 37 blocks, all that is left beside the stream at its token 20.
	 */
	static final int OTHER_CHARS = 2_308;

	static final String STALLS = "34:500,35:500,36:500,100:500,150:500";

	@Test
	void aPreemptionOfAnotherRequestIsNotTheStreamsOwnOnceTheEnginesHistogramSaysSo() {
		warmUp();
		List<Mono<Void>> streams = new ArrayList<>();
		streams.add(start(Request.of("elsewhere-holder", HOLDER_CHARS, 200).with("X-Sim-Engine-Stall", STALLS)));
		awaitTokens("elsewhere-holder", 20);
		Mono<Void> other = startPastTokengap(Request.of("elsewhere-other", OTHER_CHARS, 200));
		awaitAll(streams);
		assertThat(this.simulator.engine().preemptions()).isPositive();
		assertThat(this.simulator.engine().trace("elsewhere-holder")).noneMatch((entry) -> entry.preempted());
		assertAccurate("preemption_elsewhere", SpikeCause.QUEUE_PRESSURE, this::truthWithQueue, 4);
		assertThat(spikes()).as("spikes the gauges blamed on the stream's own preemption, corrected")
			.filteredOn((spike) -> spike.summary().contains("per-request preemption histogram says it never"))
			.isNotEmpty()
			.allSatisfy((spike) -> assertThat(spike.cause()).isEqualTo(SpikeCause.QUEUE_PRESSURE.label()))
			.allSatisfy((spike) -> assertThat(spike.causes()).contains(SpikeCause.PREEMPTION.label()))
			.allSatisfy((spike) -> assertThat(spike.engine().preemptions()).isZero());
		other.block(Duration.ofSeconds(60));
		Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> this.simulator.engine().running() == 0);
	}

}
