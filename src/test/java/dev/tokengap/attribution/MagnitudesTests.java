package dev.tokengap.attribution;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.tokengap.backend.EngineHistory;
import dev.tokengap.backend.EngineSample;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * Each candidate explains an amount of time, and the verdict does not depend on where the
 * scrapes fell.
 */
class MagnitudesTests {

	static final long MS = 1_000_000;

	/** Six other streams were decoding and none received content during the gap. */
	static final PeerView ENGINE_WIDE = new PeerView(6, 0, List.of(), null, Long.MAX_VALUE);

	/** A 900 ms gap from 1,000 ms to 1,900 ms. */
	static final Spike STALL = new Spike("r", "m", "chat_completions", 0, 85, 200 * MS,
			new GapWindow(new EventTimes(1000 * MS, 1000 * MS), new EventTimes(1900 * MS, 1900 * MS), 1900 * MS, 0), 0,
			null);

	/**
	 * Scrapes every 400 ms from {@code phaseMs}: 7 running before the gap's end, 9 after
	 * it; the prompt counters (all computed) rise by {@code prompt} in the step that
	 * ended the gap.
	 */
	static EngineSample[] scrapes(long phaseMs, double prompt) {
		List<EngineSample> samples = new ArrayList<>();
		for (long t = phaseMs; t < 2800; t += 400) {
			boolean after = t >= 1900;
			double tokens = after ? 1000 + prompt : 1000;
			samples.add(new EngineSample(t * MS, after ? 9 : 7, 0, Double.NaN, 0.5, 3, tokens, 0, 0, tokens));
		}
		return samples.toArray(new EngineSample[0]);
	}

	static CauseRules.Verdict judge(EngineSample[] window, long[] firstTokens, Double nanosPerToken) {
		Evidence evidence = Evidence.of(STALL, window, 800 * MS, firstTokens, (from, to) -> firstTokens, ENGINE_WIDE,
				new long[] { 0, 0 }, 0, 20 * MS, nanosPerToken);
		return CauseRules.verdict(STALL, evidence, CauseRulesTests.PROPERTIES);
	}

	@Test
	void aBatchThatGrewByTwoDoesNotExplainAStallOf900Ms() {
		CauseRules.Verdict verdict = judge(scrapes(100, 0), new long[] { 2, 40 }, null);
		assertThat(verdict.cause()).isEqualTo(SpikeCause.ENGINE_OTHER);
		assertThat(verdict.magnitudes().batchAdded()).isEqualTo(2);
		assertThat(verdict.magnitudes().excessNanos()).isEqualTo(880 * MS);
		assertThat(verdict.magnitudes().batchNanos() / 1e6).isCloseTo(20.0 * 2 / 7, within(0.1));
		SpikeRecord record = SpikeRecord.of(STALL, verdict,
				Evidence.of(STALL, scrapes(100, 0), 800 * MS, new long[] { 2, 40 }, (from, to) -> new long[] { 2, 40 },
						ENGINE_WIDE, new long[] { 0, 0 }, 0, 20 * MS, null));
		assertThat(record.summary()).startsWith("engine_other: engine-wide stall")
			.contains(
					"880 ms over the stream's 20 ms pace: prefill of 40 tokens (too few to count), batch growth 7 -> 9 explains ~6 ms; 874 ms "
							+ "(99%) unexplained");
		assertThat(record.explained()).extracting(SpikeRecord.Explained::cause)
			.containsExactly("preemption", "prefill_interference", "batch_growth", "engine_other");
		assertThat(record.explained().get(3).ms()).isCloseTo(874.3, within(0.5));
		assertThat(record.excessMs()).isEqualTo(880);
		assertThat(record.paceMs()).isEqualTo(20);
	}

	@Test
	void aPrefillIsChosenOnlyWhenItExplainsAtLeastWhatIsLeft() {
		// 3,600 tokens at 100 us: 360 ms of 880, 520 left: the stall is the engine's own.
		assertThat(judge(scrapes(100, 3600), new long[] { 1, 3600 }, null).cause()).isEqualTo(SpikeCause.ENGINE_OTHER);
		// 8,000 tokens: 800 ms of 880.
		assertThat(judge(scrapes(100, 8000), new long[] { 1, 8000 }, null).cause())
			.isEqualTo(SpikeCause.PREFILL_INTERFERENCE);
		// The engine's own rate, 40 us a token: 8,000 tokens explain 320 ms.
		assertThat(judge(scrapes(100, 8000), new long[] { 1, 8000 }, 40_000.0).cause())
			.isEqualTo(SpikeCause.ENGINE_OTHER);
	}

	@Test
	void theVerdictIsTheSameWhereverTheScrapesFall() {
		for (long phase = 0; phase < 400; phase += 25) {
			assertThat(judge(scrapes(phase, 3600), new long[] { 1, 3600 }, null).cause()).as("phase %d ms", phase)
				.isEqualTo(SpikeCause.ENGINE_OTHER);
			assertThat(judge(scrapes(phase, 0), new long[] { 2, 40 }, null).cause()).as("phase %d ms", phase)
				.isEqualTo(SpikeCause.ENGINE_OTHER);
			assertThat(judge(scrapes(phase, 8000), new long[] { 1, 8000 }, null).cause()).as("phase %d ms", phase)
				.isEqualTo(SpikeCause.PREFILL_INTERFERENCE);
		}
	}

	@Test
	void aCounterIsCreditedForTheShareOfEachScrapeIntervalTheGapCovers() {
		EngineSample[] window = { CauseRulesTests.sample(800, 4, 0, 0.5, 10, 0),
				CauseRulesTests.sample(1200, 4, 0, 0.5, 14, 0), CauseRulesTests.sample(1600, 4, 0, 0.5, 14, 400),
				CauseRulesTests.sample(2000, 4, 0, 0.5, 14, 800) };
		Evidence evidence = Evidence.of(STALL, window, 800 * MS, new long[] { 0, 0 });
		assertThat(evidence.preemptions()).as("between the bracketing scrapes").isEqualTo(4);
		assertThat(evidence.preemptionsInGap()).as("over the gap: half of the first interval").isEqualTo(2);
		assertThat(evidence.promptTokens()).isEqualTo(800);
		assertThat(evidence.promptTokensInGap()).isEqualTo(700);
	}

	@Test
	void thePrefillRateIsLearnedFromLongPromptsOnly() {
		EngineHistory history = new EngineHistory(16);
		assertThat(PrefillRate.learned(history, 1024)).isNull();
		// {seconds, requests, tokens} since the engine started, one scrape each
		double[][] sums = { { 0, 0, 0 }, { 0.2, 10, 100 }, { 0.45, 11, 4100 }, { 0.65, 12, 8100 }, { 0.65, 12, 8100 } };
		for (int i = 0; i < sums.length; i++) {
			history.append(new EngineSample(i * 400 * MS, 1, 0, Double.NaN, 0.5, 0, 0, 0, 0, 0, sums[i][0], sums[i][1],
					sums[i][2]));
		}
		// 10 short prompts: 2 ms a token, not read; 4,000 tokens in 250 ms, then in 200
		// ms.
		assertThat(PrefillRate.learned(history, 1024)).isCloseTo(50_000.0, within(1.0));
		EngineHistory older = new EngineHistory(4);
		older.append(new EngineSample(0, 1, 0, Double.NaN, 0.5, 0, 0, 0));
		older.append(new EngineSample(400 * MS, 1, 0, Double.NaN, 0.5, 0, 4000, 0));
		assertThat(PrefillRate.learned(older, 1024)).as("no prefill histograms").isNull();
	}

}
