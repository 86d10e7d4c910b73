package dev.tokengap.attribution;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.test.context.SpringBootTest;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A mixed load of the same kinds as {@link MixedKvPressureScenarioTests} with another
 * seed, other step costs and other timings, written before the rules were changed for
 * magnitude and not tuned on: a small KV pool and chunked prefill off (step 25 ms + 400
 * µs per sequence + 40 µs per prefill token, 360 blocks of 16 tokens); six steady decode
 * streams of 360 tokens; from their token 70 a burst of three 3,600-token prompts 450 ms
 * apart that forces waiting for capacity and a preemption; one injected 900 ms engine
 * stall at token 120 (every sequence in that step waits for it); a client that stops
 * reading for 3 s from its 100th event; a stream whose token 200 the simulator's HTTP
 * layer holds for 500 ms; five late joiners of 60 tokens at token 260. The workload runs
 * {@link #RUNS} times on one simulator; each run must get the same verdicts.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=0", "tokengap.mode=demo", "tokengap.demo.load=false",
				"tokengap.backend.scrape-interval=400ms", "tokengap.backend.scrape-timeout=350ms",
				"tokengap.attribution.spike-floor=200ms", "tokengap.proxy.client-send-buffer=8KB",
				"tokengap.sim.seed=7", "tokengap.sim.chunked-prefill=false", "tokengap.sim.step-fixed-cost=25ms",
				"tokengap.sim.step-cost-per-seq=400us", "tokengap.sim.step-cost-per-prefill-token=40us",
				"tokengap.sim.block-size=16", "tokengap.sim.num-kv-blocks=360", "tokengap.sim.max-model-len=4800",
				"tokengap.sim.per-request-metrics=true" })
class MixedHeldOutScenarioTests extends ScenarioSupport {

	static final int STEADY = 6;

	@Test
	void aLoadNotTunedOnGetsItsTrueCausesEveryRun() {
		warmUp();
		long preemptionsBefore = this.simulator.engine().preemptions();
		assertRepeatable("mixed_held_out", this::workload, this::truth, 8);
		assertThat(this.simulator.engine().preemptions()).as("preemptions").isGreaterThan(preemptionsBefore);
	}

	private List<Mono<Void>> workload(int run) {
		String prefix = "held" + run + "-";
		List<Mono<Void>> streams = new ArrayList<>();
		for (int i = 0; i < STEADY; i++) {
			Request steady = Request.of(prefix + "steady-" + i, 800, 360).withUsage();
			if (i == 1) {
				steady = steady.with("X-Sim-Engine-Stall", "120:900");
			}
			else if (i == 2) {
				steady = steady.pausingAfter(100, Duration.ofSeconds(3));
			}
			else if (i == 4) {
				steady = steady.with("X-Sim-Stall", "200:500");
			}
			streams.add(start(steady));
		}
		awaitTokens(prefix + "steady-0", 70);
		for (int i = 0; i < 3; i++) {
			streams.add(start(Request.of(prefix + "long-" + i, 14_400, 50).withUsage()));
			Mono.delay(Duration.ofMillis(450)).block();
		}
		awaitTokens(prefix + "steady-0", 260);
		for (int i = 0; i < 5; i++) {
			streams.add(start(Request.of(prefix + "late-" + i, 600, 60).withUsage()));
		}
		return streams;
	}

	/** The trace's truth; a client the scenario made stop reading is the client's. */
	private SpikeCause truth(SpikeRecord spike) {
		SpikeCause cause = truthByCost(spike);
		if (spike.requestId().endsWith("-steady-2") && cause == SpikeCause.ENGINE_OTHER && engineOnTime(spike)) {
			return SpikeCause.CLIENT_BACKPRESSURE;
		}
		return cause;
	}

}
