package dev.tokengap.attribution;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.test.context.SpringBootTest;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Causes that overlap under KV pressure, judged token by token against the simulator's
 * trace ({@link #truthByCost}): a small KV pool and chunked prefill off; seven steady
 * decode streams of 300 tokens; from their token 60 a burst of three 4,000-token prompts
 * that the pool cannot keep beside the steady streams: the first is admitted and
 * preempted about 27 tokens later (around the steady streams' token 88), the others wait
 * for capacity, and all are recomputed or prefilled once the steady streams end.
 * Meanwhile: an injected 900 ms engine stall at token 85 (the preemption lands in or just
 * after it, inside the scrapes that bracket it), another at token 150; a client that
 * stops reading for 4 s behind a small socket buffer from its 80th event, across the
 * preemption; a stream whose token 120 the simulator's HTTP layer holds for 600 ms (a
 * stall only that stream had); late joiners. The engine reports its per-request figures
 * ({@code tokengap.sim.per-request-metrics}, every client asks for the usage chunk),
 * which is what tells the HTTP-layer stall, a stall only that stream had while
 * preemptions happened elsewhere, from the engine's own. The workload runs {@link #RUNS}
 * times on one simulator; each run must get the same verdicts.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=0", "tokengap.mode=demo", "tokengap.demo.load=false",
				"tokengap.backend.scrape-interval=400ms", "tokengap.backend.scrape-timeout=350ms",
				"tokengap.attribution.spike-floor=200ms", "tokengap.proxy.client-send-buffer=8KB",
				"tokengap.sim.chunked-prefill=false", "tokengap.sim.step-fixed-cost=20ms",
				"tokengap.sim.step-cost-per-prefill-token=50us", "tokengap.sim.block-size=16",
				"tokengap.sim.num-kv-blocks=380", "tokengap.sim.max-model-len=5000",
				"tokengap.sim.per-request-metrics=true" })
class MixedKvPressureScenarioTests extends ScenarioSupport {

	static final int STEADY = 7;

	@Test
	void overlappingCausesUnderKvPressureGetTheirTrueCauseEveryRun() {
		warmUp();
		assertRepeatable("mixed_kv_pressure", this::workload, this::truth, 8);
		assertThat(this.simulator.engine().preemptions()).as("preemptions").isPositive();
	}

	private List<Mono<Void>> workload(int run) {
		String prefix = "mix" + run + "-";
		List<Mono<Void>> streams = new ArrayList<>();
		for (int i = 0; i < STEADY; i++) {
			Request steady = Request.of(prefix + "steady-" + i, 800, 300).withUsage();
			if (i == 0) {
				steady = steady.with("X-Sim-Engine-Stall", "150:900");
			}
			else if (i == 1) {
				steady = steady.with("X-Sim-Stall", "120:600");
			}
			else if (i == 2) {
				steady = steady.pausingAfter(80, Duration.ofSeconds(4));
			}
			else if (i == 3) {
				steady = steady.with("X-Sim-Engine-Stall", "85:900");
			}
			streams.add(start(steady));
		}
		awaitTokens(prefix + "steady-0", 60);
		for (int i = 0; i < 3; i++) {
			streams.add(start(Request.of(prefix + "long-" + i, 16_000, 60).withUsage()));
			Mono.delay(Duration.ofMillis(600)).block();
		}
		awaitTokens(prefix + "steady-0", 220);
		for (int i = 0; i < 4; i++) {
			streams.add(start(Request.of(prefix + "late-" + i, 800, 80).withUsage()));
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
