package dev.tokengap.backend;

import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class EngineHistoryTests {

	@Test
	void startsEmpty() {
		EngineHistory history = new EngineHistory(4);
		assertThat(history.isEmpty()).isTrue();
		assertThat(history.latest()).isNull();
		assertThat(history.window(Long.MIN_VALUE, Long.MAX_VALUE)).isEmpty();
	}

	@ParameterizedTest(name = "[{0}, {1}] -> {2}")
	@CsvSource(delimiter = '|', textBlock = """
			25  | 35  | 20 30 40
			30  | 30  | 20 30 40
			10  | 50  | 10 20 30 40 50
			0   | 100 | 10 20 30 40 50
			21  | 29  | 20 30
			0   | 5   | 10
			0   | 10  | 10 20
			60  | 70  | 50
			50  | 70  | 40 50
			35  | 25  | ''
			""")
	void givesTheSamplesInTheWindowAndOneEitherSide(long from, long to, String expected) {
		EngineHistory history = new EngineHistory(8);
		for (long t = 10; t <= 50; t += 10) {
			history.append(sample(t));
		}
		assertThat(times(history.window(from, to))).isEqualTo(expected);
	}

	@Test
	void keepsTheNewestSamplesWhenItWrapsAround() {
		EngineHistory history = new EngineHistory(4);
		for (long t = 1; t <= 10; t++) {
			history.append(sample(t * 10));
		}
		assertThat(history.capacity()).isEqualTo(4);
		assertThat(history.latest()).isEqualTo(sample(100));
		assertThat(times(history.window(Long.MIN_VALUE, Long.MAX_VALUE))).isEqualTo("70 80 90 100");
		assertThat(times(history.window(0, 75))).isEqualTo("70 80");
		assertThat(times(history.window(85, 95))).isEqualTo("80 90 100");
	}

	@Test
	void keepsEveryFieldOfASample() {
		EngineHistory history = new EngineHistory(2);
		EngineSample sample = new EngineSample(5, 1, 2, Double.NaN, 0.5, 3, 4, 6, 1, 2);
		history.append(sample);
		assertThat(history.latest()).isEqualTo(sample);
		assertThat(history.window(5, 5)).containsExactly(sample);
		EngineSample older = new EngineSample(6, 1, 2, Double.NaN, 0.5, 3, 4, 6);
		history.append(older);
		assertThat(history.latest().waitingForCapacity()).as("an older engine's").isNaN();
		assertThat(history.latest().promptTokensComputed()).isNaN();
		assertThat(history.isEmpty()).isFalse();
	}

	@Test
	void countsTheSamplesAppendedSoThatAFigureOfTheWholeHistoryKnowsWhenItChanged() {
		EngineHistory history = new EngineHistory(4);
		assertThat(history.appendedCount()).isZero();
		for (long t = 1; t <= 6; t++) {
			history.append(sample(t * 10));
		}
		assertThat(history.appendedCount()).as("past the capacity too").isEqualTo(6);
		assertThat(history.append(sample(5))).isFalse();
		assertThat(history.appendedCount()).as("a refused sample changes nothing").isEqualTo(6);
	}

	@Test
	void refusesASampleOlderThanTheNewest() {
		EngineHistory history = new EngineHistory(4);
		assertThat(history.append(sample(20))).isTrue();
		assertThat(history.append(sample(10))).isFalse();
		assertThat(history.append(sample(20))).isTrue();
		assertThat(times(history.window(0, 100))).isEqualTo("20 20");
	}

	@Test
	void coversFiveMinutesAtTheDefaultIntervalByDefault() {
		assertThat(new EngineHistory().capacity()).isGreaterThanOrEqualTo(1200);
		assertThat(EngineHistory.DEFAULT_CAPACITY).isEqualTo(ScrapeProperties.defaults().historyCapacity());
		assertThatIllegalArgumentException().isThrownBy(() -> new EngineHistory(0));
	}

	@Test
	void neverGivesAReaderATornSampleWhileTheWriterAppends() throws Exception {
		EngineHistory history = new EngineHistory(64);
		AtomicBoolean writing = new AtomicBoolean(true);
		AtomicLong reads = new AtomicLong();
		// Own threads: the common pool may have a single worker on a small machine.
		ExecutorService threads = Executors.newFixedThreadPool(3);
		try {
			readWhileWriting(history, writing, reads, threads);
		}
		finally {
			threads.shutdownNow();
		}
		assertThat(reads.get()).isGreaterThanOrEqualTo(1000);
		assertThat(history.latest()).isEqualTo(sample(300_000));
	}

	private void readWhileWriting(EngineHistory history, AtomicBoolean writing, AtomicLong reads,
			ExecutorService threads) throws Exception {
		CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
			for (long i = 1; i <= 300_000; i++) {
				history.append(sample(i));
			}
			writing.set(false);
		}, threads);
		CompletableFuture<?>[] readers = new CompletableFuture<?>[2];
		for (int r = 0; r < readers.length; r++) {
			readers[r] = CompletableFuture.runAsync(() -> {
				while (writing.get() || reads.get() < 1000) {
					EngineSample latest = history.latest();
					if (latest == null) {
						continue;
					}
					assertConsistent(latest);
					EngineSample[] window = history.window(latest.nanos() - 40, latest.nanos());
					assertThat(window.length).isBetween(1, 64);
					for (int k = 0; k < window.length; k++) {
						assertConsistent(window[k]);
						if (k > 0) {
							assertThat(window[k].nanos()).isEqualTo(window[k - 1].nanos() + 1);
						}
					}
					reads.incrementAndGet();
				}
			}, threads);
		}
		CompletableFuture.allOf(readers).get(Duration.ofSeconds(30).toMillis(), TimeUnit.MILLISECONDS);
		writer.get(Duration.ofSeconds(30).toMillis(), TimeUnit.MILLISECONDS);
	}

	/**
	 * A sample whose every field is derived from its time, so a mix of two samples shows.
	 */
	private static EngineSample sample(long t) {
		return new EngineSample(t, t, t * 2, t * 3, t * 4, t * 5, t * 6, t * 7, t * 8, t * 9);
	}

	private static void assertConsistent(EngineSample sample) {
		assertThat(sample).isEqualTo(sample(sample.nanos()));
	}

	private static String times(EngineSample[] samples) {
		return String.join(" ", Arrays.stream(samples).map((s) -> Long.toString(s.nanos())).toList());
	}

}
