package dev.tokengap.attribution;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.test.context.SpringBootTest;

/**
 * Three clients stop reading for 2 s, one after the other, while the engine keeps
 * producing: once the socket buffers are full (kept small here with
 * {@code tokengap.proxy.client-send-buffer}), tokengap's writes to that client wait.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=0", "tokengap.mode=demo", "tokengap.demo.load=false",
				"tokengap.backend.scrape-interval=400ms", "tokengap.backend.scrape-timeout=350ms",
				"tokengap.attribution.spike-floor=200ms", "tokengap.sim.step-fixed-cost=10ms",
				"tokengap.proxy.client-send-buffer=8KB" })
class ClientBackpressureScenarioTests extends ScenarioSupport {

	@Test
	void attributesAClientThatStopsReadingToClientBackpressure() {
		warmUp();
		List<Mono<Void>> streams = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			streams
				.add(start(Request.of("client-slow-" + i, 40, 600).pausingAfter(50 + 100 * i, Duration.ofSeconds(2))));
		}
		streams.add(start(Request.of("client-steady", 40, 600)));
		awaitAll(streams);
		assertAccurate("client_backpressure", SpikeCause.CLIENT_BACKPRESSURE,
				(spike) -> spike.requestId().startsWith("client-slow") ? SpikeCause.CLIENT_BACKPRESSURE
						: truthFromTrace(spike),
				3);
	}

}
