package dev.tokengap.attribution;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import dev.tokengap.backend.EngineHistory;
import dev.tokengap.backend.EngineSample;

import static org.assertj.core.api.Assertions.assertThat;

/** When an engine is stuck, on hand-made samples and a fake clock (milliseconds). */
class StuckEngineDetectorTests {

	static final long MS = 1_000_000;

	private final EngineHistory history = new EngineHistory(200);

	private final AtomicBoolean healthy = new AtomicBoolean(true);

	private final AtomicLong lastContent = new AtomicLong(-1);

	private final StuckEngineDetector detector = new StuckEngineDetector(10_000 * MS, 1000 * MS, this.history,
			this.healthy::get, this.lastContent::get, 0);

	/** Scrapes every 250 ms up to {@code untilMs}, running and waiting as given. */
	private void scrape(long fromMs, long untilMs, double running, double waiting, double generatedPerScrape) {
		EngineSample latest = this.history.latest();
		double generated = (latest != null) ? latest.generationTokens() : 0;
		for (long t = fromMs; t <= untilMs; t += 250) {
			generated += generatedPerScrape;
			this.history.append(new EngineSample(t * MS, running, waiting, Double.NaN, 0.5, 0, 0, generated));
		}
	}

	@Test
	void anEngineHoldingRequestsWithNoContentForStuckAfterIsStuck() {
		this.lastContent.set(2_000 * MS);
		scrape(0, 2_000, 4, 0, 10);
		scrape(2_250, 13_000, 4, 3, 0);
		assertThat(this.detector.stuck(11_900 * MS)).as("9.9 s after the last content").isFalse();
		assertThat(this.detector.stuck(12_000 * MS)).isTrue();
		this.healthy.set(false);
		assertThat(this.detector.stuck(12_000 * MS)).as("a dead engine is another alert's").isFalse();
		this.healthy.set(true);
		assertThat(this.detector.stuck(14_500 * MS)).as("its counts are stale").isFalse();
	}

	@Test
	void anIdleEngineIsNotStuck() {
		scrape(0, 20_000, 0, 0, 0);
		assertThat(this.detector.stuck(20_000 * MS)).isFalse();
	}

	@Test
	void anEngineGeneratingForRequestsSentPastTokengapIsNotStuck() {
		scrape(0, 20_000, 4, 0, 10);
		assertThat(this.detector.stuck(20_000 * MS)).as("no stream through tokengap, tokens generated").isFalse();
		scrape(20_250, 31_000, 4, 0, 0);
		assertThat(this.detector.stuck(31_000 * MS)).isTrue();
	}

}
