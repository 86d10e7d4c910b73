package dev.tokengap.bench;

import java.util.List;

/**
 * Service-level objectives in milliseconds, as {@code vllm bench serve --goodput} takes
 * them, plus {@code maxgap}: a request is good when each given metric is at or below its
 * objective. NaN: no objective.
 *
 * @param ttftMs time to first token
 * @param tpotMs time per output token
 * @param e2elMs end-to-end latency
 * @param maxGapMs the stream's worst gap between content events (no gap over this)
 */
record Slo(double ttftMs, double tpotMs, double e2elMs, double maxGapMs) {

	static final Slo NONE = new Slo(Double.NaN, Double.NaN, Double.NaN, Double.NaN);

	static Slo parse(List<String> pairs) {
		double[] objectives = { Double.NaN, Double.NaN, Double.NaN, Double.NaN };
		for (String pair : pairs) {
			int colon = pair.indexOf(':');
			if (colon < 0) {
				throw new IllegalArgumentException("--goodput takes KEY:MS pairs, got " + pair);
			}
			String key = pair.substring(0, colon).trim();
			double ms = Double.parseDouble(pair.substring(colon + 1).trim());
			if (!(ms >= 0)) {
				throw new IllegalArgumentException("--goodput " + key + " must not be negative");
			}
			int slot = switch (key) {
				case "ttft" -> 0;
				case "tpot" -> 1;
				case "e2el" -> 2;
				case "maxgap" -> 3;
				default ->
					throw new IllegalArgumentException("--goodput keys are ttft, tpot, e2el and maxgap, got " + key);
			};
			objectives[slot] = ms;
		}
		return new Slo(objectives[0], objectives[1], objectives[2], objectives[3]);
	}

	boolean isSet() {
		return !Double.isNaN(this.ttftMs) || !Double.isNaN(this.tpotMs) || !Double.isNaN(this.e2elMs)
				|| !Double.isNaN(this.maxGapMs);
	}

	/**
	 * Whether a completed request meets every objective. A request with no TPOT (one
	 * output token) meets a TPOT objective, as vLLM counts its TPOT as 0; one with no gap
	 * meets a {@code maxgap} objective.
	 */
	boolean met(double ttftMs, double tpotMs, double e2elMs, double maxGapMs) {
		return within(this.ttftMs, ttftMs) && within(this.tpotMs, Double.isNaN(tpotMs) ? 0 : tpotMs)
				&& within(this.e2elMs, e2elMs) && within(this.maxGapMs, maxGapMs);
	}

	private static boolean within(double objective, double value) {
		return Double.isNaN(objective) || value <= objective;
	}

	@Override
	public String toString() {
		StringBuilder text = new StringBuilder();
		append(text, "ttft", this.ttftMs);
		append(text, "tpot", this.tpotMs);
		append(text, "e2el", this.e2elMs);
		append(text, "maxgap", this.maxGapMs);
		return text.toString();
	}

	private static void append(StringBuilder text, String key, double ms) {
		if (!Double.isNaN(ms)) {
			text.append(text.isEmpty() ? "" : " ").append(key).append(':').append(Distribution.format(ms));
		}
	}

}
