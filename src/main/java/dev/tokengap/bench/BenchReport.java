package dev.tokengap.bench;

import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.IntStream;

/**
 * The figures of one run, computed the way {@code vllm bench serve} computes its own
 * (TTFT, TPOT, ITL, E2EL over successful requests; goodput against the SLOs), plus what
 * only a per-event client sees: each stream's worst gap and jitter, and smooth-stream
 * goodput.
 */
final class BenchReport {

	static final int JITTER_MIN_GAPS = 10;

	final int completed;

	final int failed;

	final double durationS;

	final long inputTokens;

	final long outputTokens;

	final int good;

	/** Output tokens of the requests that met every SLO (all successful ones without). */
	final long goodTokens;

	final int smooth;

	final Distribution ttft;

	final Distribution tpot;

	final Distribution itl;

	final Distribution e2el;

	final Distribution maxGap;

	final Distribution jitter;

	/** The client's values behind ttft, itl and e2el, sorted (milliseconds). */
	final double[] ttftValues;

	final double[] itlValues;

	final double[] e2elValues;

	final Map<String, Integer> errors = new LinkedHashMap<>();

	final StreamShapeReport shape;

	/** Requests sent over the run, per second (the arrival rate of Little's law). */
	final double arrivalRate;

	/** Measured mean requests in flight over the run. */
	final double meanInFlight;

	/** Warm-up requests sent, and the TTFTs of the successful ones (cold start). */
	final int warmupRequests;

	final Distribution warmupTtft;

	final double firstWarmupTtftMs;

	private final BenchOptions options;

	BenchReport(BenchOptions options, LoadRun.Outcome outcome, LoadRun.Outcome warmup) {
		this.options = options;
		this.warmupRequests = warmup.results().size();
		List<StreamResult> warm = warmup.results().stream().filter(StreamResult::ok).toList();
		this.warmupTtft = Distribution.of(warm.stream().mapToDouble(StreamResult::ttftMs).toArray());
		this.firstWarmupTtftMs = warm.stream()
			.min(Comparator.comparingLong(StreamResult::startNanos))
			.map(StreamResult::ttftMs)
			.orElse(Double.NaN);
		List<StreamResult> ok = outcome.results().stream().filter(StreamResult::ok).toList();
		this.completed = ok.size();
		this.failed = outcome.results().size() - ok.size();
		outcome.results()
			.stream()
			.filter((r) -> !r.ok())
			.forEach((r) -> this.errors.merge(String.valueOf(r.error()), 1, Integer::sum));
		this.durationS = outcome.durationNanos() / 1e9;
		this.inputTokens = ok.stream().mapToLong((r) -> r.promptTokens).sum();
		this.outputTokens = ok.stream().mapToLong(StreamResult::outputTokens).sum();
		this.ttftValues = ok.stream().mapToDouble(StreamResult::ttftMs).toArray();
		this.ttft = Distribution.of(this.ttftValues);
		this.tpot = Distribution
			.of(ok.stream().mapToDouble(StreamResult::tpotMs).filter((t) -> !Double.isNaN(t)).toArray());
		this.e2elValues = ok.stream().mapToDouble(StreamResult::e2elMs).toArray();
		this.e2el = Distribution.of(this.e2elValues);
		this.itlValues = ok.stream()
			.flatMapToDouble((r) -> IntStream.range(0, r.gapCount()).mapToDouble((i) -> r.gapNanos(i) / 1e6))
			.toArray();
		this.itl = Distribution.of(this.itlValues);
		this.maxGap = Distribution
			.of(ok.stream().filter((r) -> r.gapCount() > 0).mapToDouble((r) -> r.maxGapNanos() / 1e6).toArray());
		this.shape = new StreamShapeReport(ok);
		this.arrivalRate = outcome.results().size() / this.durationS;
		this.meanInFlight = outcome.meanInFlight();
		this.jitter = Distribution.of(ok.stream()
			.filter((r) -> r.gapCount() >= JITTER_MIN_GAPS)
			.mapToDouble(StreamResult::jitterRatio)
			.filter((j) -> !Double.isNaN(j))
			.toArray());
		Slo slo = options.goodput();
		List<StreamResult> goodOnes = ok.stream()
			.filter((r) -> slo.met(r.ttftMs(), r.tpotMs(), r.e2elMs(), r.maxGapNanos() / 1e6))
			.toList();
		this.good = goodOnes.size();
		this.goodTokens = goodOnes.stream().mapToLong(StreamResult::outputTokens).sum();
		long stallNanos = (long) (options.stallThresholdMs() * 1e6);
		this.smooth = (int) ok.stream().filter((r) -> r.maxGapNanos() < stallNanos).count();
	}

	/**
	 * The result table, in {@code vllm bench serve}'s layout with tokengap's extra rows.
	 */
	String table() {
		StringBuilder out = new StringBuilder();
		out.append(center(" Serving Benchmark Result ", '=')).append('\n');
		line(out, "Successful requests:", Integer.toString(this.completed));
		line(out, "Failed requests:", Integer.toString(this.failed));
		line(out, "Benchmark duration (s):", Distribution.format(this.durationS));
		line(out, "Total input tokens:", Long.toString(this.inputTokens));
		line(out, "Total generated tokens:", Long.toString(this.outputTokens));
		line(out, "Request throughput (req/s):", Distribution.format(this.completed / this.durationS));
		if (this.options.goodput().isSet()) {
			line(out, "Request goodput (req/s):", Distribution.format(this.good / this.durationS));
			line(out, "Good requests (" + this.options.goodput() + "):", share(this.good));
		}
		line(out, "Output token throughput (tok/s):", Distribution.format(this.outputTokens / this.durationS));
		line(out, "Token goodput (tok/s):", Distribution.format(this.goodTokens / this.durationS));
		line(out, "Mean requests in flight:", Distribution.format(this.meanInFlight));
		line(out, "Arrival rate x mean E2EL (Little's law):", Distribution.format(littlesLaw()));
		if (this.warmupRequests > 0) {
			line(out, "Warm-up requests (excluded):", Integer.toString(this.warmupRequests));
			line(out, "Warm-up TTFT first / max (ms):",
					Distribution.format(this.firstWarmupTtftMs) + " / " + Distribution.format(this.warmupTtft.max()));
		}
		line(out, "Smooth streams (no gap >= " + Distribution.format(this.options.stallThresholdMs()) + " ms):",
				share(this.smooth));
		out.append(center(" Latency (ms) ", '-')).append('\n');
		out.append(String.format(Locale.ROOT, "%-22s%10s%10s%10s%10s%10s%n", "", "mean", "p50", "p90", "p95", "p99"));
		row(out, "TTFT", this.ttft);
		row(out, "TPOT", this.tpot);
		row(out, "ITL", this.itl);
		row(out, "E2EL", this.e2el);
		row(out, "Worst gap per stream", this.maxGap);
		row(out, "Jitter p99/p50 (x)", this.jitter);
		row(out, "Per-stream p99 gap", this.shape.streamP99Gap);
		this.shape.table(out);
		this.errors.forEach((error, n) -> out.append("failed: ").append(n).append(" x ").append(error).append('\n'));
		out.append("=".repeat(72)).append('\n');
		return out.toString();
	}

	private String share(int n) {
		double percent = (this.completed == 0) ? Double.NaN : 100.0 * n / this.completed;
		return n + "/" + this.completed + " (" + Distribution.format(percent) + " %)";
	}

	/** Arrival rate times the mean E2EL of the successful requests, ms to s. */
	double littlesLaw() {
		return this.arrivalRate * this.e2el.mean() / 1000;
	}

	static void line(StringBuilder out, String label, String value) {
		out.append(String.format(Locale.ROOT, "%-52s%20s%n", label, value));
	}

	private static void row(StringBuilder out, String label, Distribution d) {
		out.append(String.format(Locale.ROOT, "%-22s%10s%10s%10s%10s%10s%n", label, Distribution.format(d.mean()),
				Distribution.format(d.p50()), Distribution.format(d.p90()), Distribution.format(d.p95()),
				Distribution.format(d.p99())));
	}

	static String center(String title, char fill) {
		int pad = Math.max(0, 72 - title.length());
		return String.valueOf(fill).repeat(pad / 2) + title + String.valueOf(fill).repeat(pad - pad / 2);
	}

	/** The figures under {@code vllm bench serve}'s JSON keys, and ours beside them. */
	Map<String, Object> json() {
		Map<String, Object> json = new LinkedHashMap<>();
		json.put("base_url", this.options.baseUrl().toString());
		json.put("endpoint", this.options.path());
		json.put("num_prompts", this.options.numPrompts());
		json.put("request_rate", Double.isInfinite(this.options.requestRate()) ? "inf" : this.options.requestRate());
		json.put("max_concurrency", (this.options.maxConcurrency() > 0) ? this.options.maxConcurrency() : null);
		json.put("duration", this.durationS);
		json.put("completed", this.completed);
		json.put("failed", this.failed);
		json.put("errors", this.errors);
		json.put("total_input_tokens", this.inputTokens);
		json.put("total_output_tokens", this.outputTokens);
		json.put("request_throughput", this.completed / this.durationS);
		json.put("request_goodput", this.options.goodput().isSet() ? this.good / this.durationS : null);
		json.put("output_throughput", this.outputTokens / this.durationS);
		json.put("token_goodput", this.goodTokens / this.durationS);
		json.put("good_requests", this.good);
		json.put("mean_in_flight", finite(this.meanInFlight));
		json.put("arrival_rate", finite(this.arrivalRate));
		json.put("littles_law_in_flight", finite(littlesLaw()));
		json.put("warmup_requests", this.warmupRequests);
		json.put("warmup_first_ttft_ms", finite(this.firstWarmupTtftMs));
		put(json, "warmup_ttft", this.warmupTtft, "_ms");
		json.put("stall_threshold_ms", this.options.stallThresholdMs());
		json.put("smooth_streams", this.smooth);
		json.put("smooth_stream_goodput", (this.completed == 0) ? null : (double) this.smooth / this.completed);
		double[] smoothInterval = Distribution.wilson95(this.smooth, this.completed);
		json.put("ci_low_smooth_stream_goodput", finite(smoothInterval[0]));
		json.put("ci_high_smooth_stream_goodput", finite(smoothInterval[1]));
		put(json, "ttft", this.ttft, "_ms");
		confidence(json, "p99_ttft_ms", this.ttftValues);
		put(json, "tpot", this.tpot, "_ms");
		put(json, "itl", this.itl, "_ms");
		put(json, "e2el", this.e2el, "_ms");
		put(json, "max_gap", this.maxGap, "_ms");
		put(json, "jitter_ratio", this.jitter, "");
		this.shape.json(json);
		return json;
	}

	/**
	 * {@code ci_low_KEY} and {@code ci_high_KEY}: the 95 % confidence interval of a p99
	 * from its sorted values, which compare holds two runs' p99s apart by.
	 */
	static void confidence(Map<String, Object> json, String key, double[] sorted) {
		double[] interval = Distribution.confidence95(sorted, 99);
		json.put("ci_low_" + key, finite(interval[0]));
		json.put("ci_high_" + key, finite(interval[1]));
	}

	static void put(Map<String, Object> json, String name, Distribution d, String unit) {
		json.put("mean_" + name + unit, finite(d.mean()));
		json.put("median_" + name + unit, finite(d.p50()));
		json.put("p90_" + name + unit, finite(d.p90()));
		json.put("p95_" + name + unit, finite(d.p95()));
		json.put("p99_" + name + unit, finite(d.p99()));
	}

	static Double finite(double value) {
		return Double.isFinite(value) ? value : null;
	}

}
