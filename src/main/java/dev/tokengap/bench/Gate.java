package dev.tokengap.bench;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One gated figure of a run record and how much worse it may get: NEW fails when it is
 * worse than BASE by more than {@code max(relative x |BASE|, absolute)}. The absolute
 * floor is what makes two runs of one configuration pass: a figure near zero (a share, a
 * count, a few milliseconds) moves by more than any relative tolerance from noise alone.
 * Throughputs, goodputs and shares of good streams are better higher; everything else
 * (latencies, failures, unstable share) is better lower.
 *
 * @param key the record's key
 * @param relative the relative tolerance (0.25: 25 %)
 * @param absolute the absolute floor, in the figure's unit
 */
record Gate(String key, double relative, double absolute) {

	/**
	 * The default gates and their tolerances, from repeated runs of one configuration
	 * (docs/bench-record.md shows the spread they cover).
	 */
	static final Map<String, Gate> DEFAULTS;

	static {
		Map<String, Gate> gates = new LinkedHashMap<>();
		gates.put("p99_stream_p99_gap_ms", new Gate("p99_stream_p99_gap_ms", 0.5, 150));
		gates.put("smooth_stream_goodput", new Gate("smooth_stream_goodput", 0, 0.05));
		gates.put("p99_ttft_ms", new Gate("p99_ttft_ms", 0.5, 250));
		gates.put("token_goodput", new Gate("token_goodput", 0.25, 0));
		gates.put("failed", new Gate("failed", 0, 0));
		DEFAULTS = Collections.unmodifiableMap(gates);
	}

	/**
	 * {@code KEY:REL:ABS}, REL a fraction or a percentage ({@code 0.1} or {@code 10%}).
	 */
	static Gate parse(String spec) {
		String[] parts = spec.split(":", -1);
		if (parts.length != 3 || parts[0].isBlank()) {
			throw new IllegalArgumentException("--gate takes KEY:REL:ABS (or KEY:off), got " + spec);
		}
		String rel = parts[1].trim();
		double relative = rel.endsWith("%") ? Double.parseDouble(rel.substring(0, rel.length() - 1)) / 100
				: Double.parseDouble(rel);
		double absolute = Double.parseDouble(parts[2].trim());
		if (!(relative >= 0) || !(absolute >= 0)) {
			throw new IllegalArgumentException("--gate tolerances must not be negative, got " + spec);
		}
		return new Gate(parts[0].trim(), relative, absolute);
	}

	boolean higherIsBetter() {
		return this.key.contains("throughput") || this.key.contains("goodput") || this.key.equals("completed")
				|| this.key.equals("good_requests");
	}

	/** The least good of several runs' values of this figure (NaN where none has it). */
	double worst(double[] values) {
		double worst = Double.NaN;
		for (double value : values) {
			if (!Double.isNaN(value) && (Double.isNaN(worst) || (higherIsBetter() ? value < worst : value > worst))) {
				worst = value;
			}
		}
		return worst;
	}

	/**
	 * Whether {@code next} is worse than {@code base} beyond tolerance; a figure NEW
	 * lacks while BASE has it is worse, one neither has is not.
	 */
	boolean worse(double base, double next) {
		if (Double.isNaN(base)) {
			return false;
		}
		if (Double.isNaN(next)) {
			return true;
		}
		double by = higherIsBetter() ? base - next : next - base;
		return by > Math.max(this.relative * Math.abs(base), this.absolute);
	}

	/** As the command line takes it: {@code p99_ttft_ms:25%:50}. */
	@Override
	public String toString() {
		return this.key + ":" + plain(this.relative * 100) + "%:" + plain(this.absolute);
	}

	private static String plain(double value) {
		return BigDecimal.valueOf(value).setScale(4, RoundingMode.HALF_UP).stripTrailingZeros().toPlainString();
	}

}
