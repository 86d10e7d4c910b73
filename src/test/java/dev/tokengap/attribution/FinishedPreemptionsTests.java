package dev.tokengap.attribution;

import java.util.stream.Stream;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import dev.tokengap.backend.EngineSample;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

class FinishedPreemptionsTests {

	private static final long MS = 1_000_000L;

	private static final double NaN = Double.NaN;

	/**
	 * Samples at 0, 400 and 800 ms; the request finished after 300 ms and the stream
	 * ended at 500 ms, so the histogram's rise from 0 ms to 800 ms holds it.
	 */
	static Stream<Arguments> histograms() {
		return Stream.of(
				arguments("it finished alone, never preempted", new double[] { 10, 10, 11 }, new double[] { 4, 4, 4 },
						0),
				arguments("it finished alone, preempted twice", new double[] { 10, 10, 11 }, new double[] { 4, 4, 6 },
						2),
				arguments("three finished, none of them preempted", new double[] { 10, 12, 13 },
						new double[] { 4, 4, 4 }, 0),
				arguments("two finished, one of them preempted: whose?", new double[] { 10, 11, 12 },
						new double[] { 4, 4, 5 }, FinishedPreemptions.UNKNOWN),
				arguments("nothing finished yet by the last scrape", new double[] { 10, 10, 10 },
						new double[] { 4, 4, 4 }, FinishedPreemptions.UNKNOWN),
				arguments("an engine without the histogram", new double[] { NaN, NaN, NaN },
						new double[] { NaN, NaN, NaN }, FinishedPreemptions.UNKNOWN),
				arguments("an upgrade mid-window", new double[] { NaN, 10, 11 }, new double[] { NaN, 4, 4 },
						FinishedPreemptions.UNKNOWN));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("histograms")
	void readsTheRequestsPreemptionsFromTheHistogramAcrossItsEnd(String description, double[] finished,
			double[] preemptions, long expected) {
		EngineSample[] window = new EngineSample[3];
		for (int i = 0; i < window.length; i++) {
			window[i] = new EngineSample(i * 400 * MS, 1, 0, NaN, 0.5, 0, 0, 0, 0, 0, NaN, NaN, NaN, finished[i],
					preemptions[i]);
		}
		assertThat(FinishedPreemptions.of(window, 300 * MS, 500 * MS)).isEqualTo(expected);
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("histograms")
	void saysNothingWithoutAScrapeOnEitherSideOfTheEnd(String description, double[] finished, double[] preemptions,
			long expected) {
		EngineSample[] window = {
				new EngineSample(0, 1, 0, NaN, 0.5, 0, 0, 0, 0, 0, NaN, NaN, NaN, finished[0], preemptions[0]) };
		assertThat(FinishedPreemptions.of(window, 300 * MS, 500 * MS)).isEqualTo(FinishedPreemptions.UNKNOWN);
	}

}
