package dev.tokengap.bench;

import java.net.URI;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;

/**
 * Puts the client's p50 and p99 next to tokengap's and the engine's, each side estimated
 * from the bucket deltas of its histograms between a scrape before the run and one after
 * it, the way {@code histogram_quantile} does. The client's own values are also put
 * through tokengap's bucket edges and the same estimator, so what differs in that column
 * is the measurement, not the bucketing. Tokengap's side reads only the series of the
 * endpoint the bench drove ({@code endpoint="responses"} for
 * {@code --endpoint responses}), so other traffic through the same tokengap does not blur
 * the comparison; the engine's series have no such label.
 */
final class MetricsComparison {

	/** Lets the last streams' records land in both exporters before the second scrape. */
	static final Duration SETTLE = Duration.ofMillis(500);

	private static final String[][] ROWS = {
			{ "TTFT", "tokengap_time_to_first_token_seconds", "vllm:time_to_first_token_seconds" },
			{ "ITL", "tokengap_inter_token_latency_seconds", "vllm:inter_token_latency_seconds" },
			{ "E2EL", "tokengap_e2e_request_latency_seconds", "vllm:e2e_request_latency_seconds" } };

	/** vLLM's ITL before 0.11 (removed January 2026). */
	private static final String OLD_ENGINE_ITL = "vllm:time_per_output_token_seconds";

	private final HttpClient http = BenchClients.SMALL.responseTimeout(Duration.ofSeconds(10));

	private final URI tokengapUrl;

	private final URI engineUrl;

	private final String endpointLabel;

	private HistogramSnapshot tokengapBefore;

	private HistogramSnapshot engineBefore;

	/**
	 * @param tokengapUrl tokengap's exposition, or null
	 * @param engineUrl the engine's exposition, or null
	 * @param endpointLabel the {@code endpoint} label of the series to read on tokengap's
	 * side
	 */
	MetricsComparison(URI tokengapUrl, URI engineUrl, String endpointLabel) {
		this.tokengapUrl = tokengapUrl;
		this.engineUrl = engineUrl;
		this.endpointLabel = endpointLabel;
	}

	boolean enabled() {
		return this.tokengapUrl != null || this.engineUrl != null;
	}

	void before() {
		this.tokengapBefore = scrape(this.tokengapUrl, this.endpointLabel);
		this.engineBefore = scrape(this.engineUrl, null);
	}

	/** Scrapes again and compares. */
	Result after(BenchReport report) {
		HistogramSnapshot tokengap = scrape(this.tokengapUrl, this.endpointLabel);
		HistogramSnapshot engine = scrape(this.engineUrl, null);
		Map<String, Row> rows = new LinkedHashMap<>();
		Distribution[] client = { report.ttft, report.itl, report.e2el };
		for (int i = 0; i < ROWS.length; i++) {
			String engineName = ROWS[i][2];
			if (i == 1 && !engine.has(engineName) && engine.has(OLD_ENGINE_ITL)) {
				engineName = OLD_ENGINE_ITL;
			}
			rows.put(ROWS[i][0],
					new Row(client[i].p50(), client[i].p99(), Double.NaN, Double.NaN,
							ms(tokengap.quantileSince(this.tokengapBefore, ROWS[i][1], 0.5)),
							ms(tokengap.quantileSince(this.tokengapBefore, ROWS[i][1], 0.99)),
							tokengap.countSince(this.tokengapBefore, ROWS[i][1]),
							ms(engine.quantileSince(this.engineBefore, engineName, 0.5)),
							ms(engine.quantileSince(this.engineBefore, engineName, 0.99)),
							engine.countSince(this.engineBefore, engineName)));
		}
		Result result = new Result(rows, tokengap, engine);
		double[][] values = { report.ttftValues, report.itlValues, report.e2elValues };
		for (int i = 0; i < ROWS.length; i++) {
			result.bucketClient(ROWS[i][0], ROWS[i][1], values[i]);
		}
		return result;
	}

	private HistogramSnapshot scrape(URI url, String endpoint) {
		if (url == null) {
			return HistogramSnapshot.empty();
		}
		try {
			String text = this.http.get()
				.uri(url)
				.responseSingle((response, body) -> (response.status().code() == 200) ? body.asString()
						: Mono.error(new IllegalStateException("HTTP " + response.status().code())))
				.block(Duration.ofSeconds(15));
			return HistogramSnapshot.parse((text != null) ? text : "", (endpoint != null) ? "endpoint" : null,
					endpoint);
		}
		catch (RuntimeException ex) {
			System.err.println("bench: could not scrape " + url + ": " + ex.getMessage());
			return HistogramSnapshot.empty();
		}
	}

	private static double ms(double seconds) {
		return seconds * 1000;
	}

	/**
	 * One metric's p50 and p99 on each side, in milliseconds; NaN where a side has no
	 * data.
	 *
	 * @param clientP50 the client's exact median
	 * @param clientP99 the client's exact 99th percentile
	 * @param clientBucketedP50 the client's values through tokengap's edges and the
	 * estimator
	 * @param clientBucketedP99 likewise
	 * @param tokengapP50 tokengap's histogram estimate
	 * @param tokengapP99 likewise
	 * @param tokengapCount observations tokengap made during the run
	 * @param engineP50 the engine's histogram estimate
	 * @param engineP99 likewise
	 * @param engineCount observations the engine made during the run
	 */
	record Row(double clientP50, double clientP99, double clientBucketedP50, double clientBucketedP99,
			double tokengapP50, double tokengapP99, double tokengapCount, double engineP50, double engineP99,
			double engineCount) {

		Row withBucketed(double p50, double p99) {
			return new Row(this.clientP50, this.clientP99, p50, p99, this.tokengapP50, this.tokengapP99,
					this.tokengapCount, this.engineP50, this.engineP99, this.engineCount);
		}

	}

	/** The compared rows, and the snapshots they came from. */
	static final class Result {

		final Map<String, Row> rows;

		final HistogramSnapshot tokengap;

		final HistogramSnapshot engine;

		Result(Map<String, Row> rows, HistogramSnapshot tokengap, HistogramSnapshot engine) {
			this.rows = rows;
			this.tokengap = tokengap;
			this.engine = engine;
		}

		/** Adds the client's values bucketed with tokengap's edges, per row. */
		void bucketClient(String row, String family, double[] clientMs) {
			double[] edges = this.tokengap.edges(family);
			if (edges.length < 2) {
				return;
			}
			double[] counts = new double[edges.length];
			for (double ms : clientMs) {
				double seconds = ms / 1000;
				for (int i = 0; i < edges.length; i++) {
					if (seconds <= edges[i]) {
						counts[i]++;
					}
				}
			}
			this.rows.computeIfPresent(row, (k, r) -> r.withBucketed(ms(HistogramQuantile.estimate(0.5, edges, counts)),
					ms(HistogramQuantile.estimate(0.99, edges, counts))));
		}

		String table() {
			StringBuilder out = new StringBuilder();
			out.append(BenchReport.center(" Client vs tokengap vs engine: p50 / p99 (ms) ", '-')).append('\n');
			out.append(String.format(Locale.ROOT, "%-6s%19s%19s%19s%19s%n", "", "client", "client@tg-buckets",
					"tokengap", "engine"));
			this.rows.forEach((name,
					r) -> out.append(String.format(Locale.ROOT, "%-6s%19s%19s%19s%19s%n", name,
							pair(r.clientP50, r.clientP99), pair(r.clientBucketedP50, r.clientBucketedP99),
							pair(r.tokengapP50, r.tokengapP99), pair(r.engineP50, r.engineP99))));
			out.append("(tokengap and engine: histogram_quantile over the bucket deltas of this run; "
					+ "client@tg-buckets: the client's values through tokengap's edges)\n");
			return out.toString();
		}

		private static String pair(double p50, double p99) {
			if (Double.isNaN(p50) && Double.isNaN(p99)) {
				return "-";
			}
			return Distribution.format(p50) + " / " + Distribution.format(p99);
		}

		Map<String, Object> json() {
			Map<String, Object> json = new LinkedHashMap<>();
			this.rows.forEach((name, r) -> {
				Map<String, Object> row = new LinkedHashMap<>();
				row.put("client_p50_ms", BenchReport.finite(r.clientP50));
				row.put("client_p99_ms", BenchReport.finite(r.clientP99));
				row.put("client_bucketed_p50_ms", BenchReport.finite(r.clientBucketedP50));
				row.put("client_bucketed_p99_ms", BenchReport.finite(r.clientBucketedP99));
				row.put("tokengap_p50_ms", BenchReport.finite(r.tokengapP50));
				row.put("tokengap_p99_ms", BenchReport.finite(r.tokengapP99));
				row.put("tokengap_count", r.tokengapCount);
				row.put("engine_p50_ms", BenchReport.finite(r.engineP50));
				row.put("engine_p99_ms", BenchReport.finite(r.engineP99));
				row.put("engine_count", r.engineCount);
				json.put(name.toLowerCase(Locale.ROOT), row);
			});
			return json;
		}

	}

}
