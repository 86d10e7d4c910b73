package dev.tokengap.bench;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The shape of the successful streams, beyond their latency percentiles: each stream's
 * own p99 gap summarised across streams (the release gate's figure), the share of
 * unstable streams, where in their streams the spikes sit, and, for streams that reason
 * first, the time to their first answer token.
 */
final class StreamShapeReport {

	/** A stream with a jitter ratio above this is unstable (the metrics contract's). */
	static final double UNSTABLE_JITTER = 5;

	/** tokengap's spike rule: at least this gap ... */
	static final long SPIKE_FLOOR_NANOS = 100_000_000L;

	/** ... and at least this many times the stream's median gap so far. */
	static final double SPIKE_FACTOR = 4;

	static final String[] THIRDS = { "head", "middle", "tail" };

	/** Per-stream p99 gap (nearest rank) over streams with at least 10 gaps, ms. */
	final Distribution streamP99Gap;

	/** Those per-stream p99 gaps, sorted. */
	final double[] streamP99Gaps;

	/** Streams with a jitter ratio, and those of them above {@link #UNSTABLE_JITTER}. */
	final int jitterStreams;

	final int unstable;

	/** Spikes in the first, middle and last third of their streams' content events. */
	final int[] spikes = new int[3];

	/** The worst spike in each third, ms (0 with none). */
	final double[] worstSpikeMs = new double[3];

	/** Streams whose first content event was reasoning. */
	final int reasoningStreams;

	/** Request sent to the first answer event after reasoning, ms, over those streams. */
	final Distribution firstAnswer;

	StreamShapeReport(List<StreamResult> ok) {
		this.streamP99Gaps = ok.stream()
			.filter((r) -> r.gapCount() >= BenchReport.JITTER_MIN_GAPS)
			.mapToDouble((r) -> r.p99GapNanos() / 1e6)
			.toArray();
		this.streamP99Gap = Distribution.of(this.streamP99Gaps);
		double[] jitter = ok.stream()
			.filter((r) -> r.gapCount() >= BenchReport.JITTER_MIN_GAPS)
			.mapToDouble(StreamResult::jitterRatio)
			.filter((j) -> !Double.isNaN(j))
			.toArray();
		this.jitterStreams = jitter.length;
		int above = 0;
		for (double j : jitter) {
			above += (j > UNSTABLE_JITTER) ? 1 : 0;
		}
		this.unstable = above;
		ok.forEach(this::countSpikes);
		double[] answers = ok.stream()
			.mapToDouble(StreamResult::firstAnswerMs)
			.filter((t) -> !Double.isNaN(t))
			.toArray();
		this.reasoningStreams = answers.length;
		this.firstAnswer = Distribution.of(answers);
	}

	private void countSpikes(StreamResult stream) {
		boolean[] spike = stream.spikes(SPIKE_FLOOR_NANOS, SPIKE_FACTOR);
		for (int i = 0; i < spike.length; i++) {
			if (spike[i]) {
				int third = stream.third(i);
				this.spikes[third]++;
				this.worstSpikeMs[third] = Math.max(this.worstSpikeMs[third], stream.gapNanos(i) / 1e6);
			}
		}
	}

	/** Unstable streams over streams with a jitter ratio; NaN with none. */
	double unstableShare() {
		return (this.jitterStreams == 0) ? Double.NaN : (double) this.unstable / this.jitterStreams;
	}

	void table(StringBuilder out) {
		out.append(BenchReport.center(" Stream shape ", '-')).append('\n');
		BenchReport.line(out, "Per-stream p99 gap, p50 across streams (ms):",
				Distribution.format(this.streamP99Gap.p50()));
		BenchReport.line(out, "Per-stream p99 gap, p99 across streams (ms):",
				Distribution.format(this.streamP99Gap.p99()));
		BenchReport.line(out, "Unstable streams (jitter > 5):",
				this.unstable + "/" + this.jitterStreams + " (" + Distribution.format(100 * unstableShare()) + " %)");
		for (int t = 0; t < 3; t++) {
			BenchReport.line(out, "Spikes in the " + THIRDS[t] + " third (worst ms):", this.spikes[t] + " ("
					+ ((this.spikes[t] > 0) ? Distribution.format(this.worstSpikeMs[t]) : "-") + ")");
		}
		if (this.reasoningStreams > 0) {
			BenchReport.line(out, "First answer after reasoning p50/p99 (ms):",
					Distribution.format(this.firstAnswer.p50()) + " / " + Distribution.format(this.firstAnswer.p99()));
		}
	}

	void json(Map<String, Object> json) {
		BenchReport.put(json, "stream_p99_gap", this.streamP99Gap, "_ms");
		BenchReport.confidence(json, "p99_stream_p99_gap_ms", this.streamP99Gaps);
		json.put("jitter_streams", this.jitterStreams);
		json.put("unstable_streams", this.unstable);
		json.put("unstable_stream_share", BenchReport.finite(unstableShare()));
		Map<String, Object> spikes = new LinkedHashMap<>();
		for (int t = 0; t < 3; t++) {
			Map<String, Object> third = new LinkedHashMap<>();
			third.put("count", this.spikes[t]);
			third.put("worst_gap_ms", (this.spikes[t] > 0) ? this.worstSpikeMs[t] : null);
			spikes.put(THIRDS[t], third);
		}
		json.put("spikes", spikes);
		json.put("reasoning_streams", this.reasoningStreams);
		BenchReport.put(json, "first_answer", this.firstAnswer, "_ms");
	}

}
