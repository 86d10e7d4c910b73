package dev.tokengap.bench;

import java.util.List;

/**
 * Service-level objectives in milliseconds, as {@code vllm bench serve --goodput} takes
 * them: a request is good when each given metric is at or below its objective. NaN: no
 * objective.
 *
 * @param ttftMs time to first token
 * @param tpotMs time per output token
 * @param e2elMs end-to-end latency
 */
record Slo(double ttftMs, double tpotMs, double e2elMs) {

	static final Slo NONE = new Slo(Double.NaN, Double.NaN, Double.NaN);

	static Slo parse(List<String> pairs) {
		double ttft = Double.NaN;
		double tpot = Double.NaN;
		double e2el = Double.NaN;
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
			switch (key) {
				case "ttft" -> ttft = ms;
				case "tpot" -> tpot = ms;
				case "e2el" -> e2el = ms;
				default -> throw new IllegalArgumentException("--goodput keys are ttft, tpot and e2el, got " + key);
			}
		}
		return new Slo(ttft, tpot, e2el);
	}

	boolean isSet() {
		return !Double.isNaN(this.ttftMs) || !Double.isNaN(this.tpotMs) || !Double.isNaN(this.e2elMs);
	}

	/**
	 * Whether a completed request meets every objective. A request with no TPOT (one
	 * output token) meets a TPOT objective, as vLLM counts its TPOT as 0.
	 */
	boolean met(double ttftMs, double tpotMs, double e2elMs) {
		return within(this.ttftMs, ttftMs) && within(this.tpotMs, Double.isNaN(tpotMs) ? 0 : tpotMs)
				&& within(this.e2elMs, e2elMs);
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
		return text.toString();
	}

	private static void append(StringBuilder text, String key, double ms) {
		if (!Double.isNaN(ms)) {
			text.append(text.isEmpty() ? "" : " ").append(key).append(':').append(Distribution.format(ms));
		}
	}

}
