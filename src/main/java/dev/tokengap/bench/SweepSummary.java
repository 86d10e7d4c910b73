package dev.tokengap.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A sweep's points and where its working point is. The knee is found on the curve of p99
 * TTFT against output throughput, in the points' order: both axes scaled to 0..1 over the
 * sweep, the knee is the point furthest above the diagonal from the first point (least
 * throughput, least latency) to the worst one, that is the one maximising scaled
 * throughput minus scaled p99 TTFT (Kneedle's difference curve): past it each unit of
 * throughput costs more latency than the sweep's average. The goodput peak is the point
 * of highest token goodput.
 */
final class SweepSummary {

	final String parameter;

	final List<Point> points;

	final int knee;

	final int goodputPeak;

	SweepSummary(String parameter, List<Point> points) {
		this.parameter = parameter;
		this.points = List.copyOf(points);
		this.knee = knee(this.points);
		int peak = 0;
		for (int i = 1; i < this.points.size(); i++) {
			if (this.points.get(i).tokenGoodput() > this.points.get(peak).tokenGoodput()) {
				peak = i;
			}
		}
		this.goodputPeak = peak;
	}

	static int knee(List<Point> points) {
		double[] x = points.stream().mapToDouble(Point::outputThroughput).toArray();
		double[] y = points.stream().mapToDouble(Point::p99TtftMs).toArray();
		double xMin = min(x);
		double xSpan = max(x) - xMin;
		double yMin = min(y);
		double ySpan = max(y) - yMin;
		int best = 0;
		double bestScore = Double.NEGATIVE_INFINITY;
		for (int i = 0; i < points.size(); i++) {
			double score = ((xSpan > 0) ? (x[i] - xMin) / xSpan : 0) - ((ySpan > 0) ? (y[i] - yMin) / ySpan : 0);
			if (score > bestScore + 1e-9) {
				best = i;
				bestScore = score;
			}
		}
		return best;
	}

	private static double min(double[] values) {
		double min = Double.POSITIVE_INFINITY;
		for (double v : values) {
			min = Double.isNaN(v) ? min : Math.min(min, v);
		}
		return min;
	}

	private static double max(double[] values) {
		double max = Double.NEGATIVE_INFINITY;
		for (double v : values) {
			max = Double.isNaN(v) ? max : Math.max(max, v);
		}
		return max;
	}

	String table() {
		StringBuilder out = new StringBuilder();
		out.append(BenchReport.center(" Sweep: " + this.parameter + " ", '=')).append('\n');
		String first = "%-" + (this.parameter.length() + 1) + "s";
		out.append(String.format(Locale.ROOT, first + "%11s%11s%11s%11s%11s%8s%n", this.parameter, "out tok/s",
				"goodput", "p99 TTFT", "p99 gap", "in flight", "failed"));
		for (int i = 0; i < this.points.size(); i++) {
			Point p = this.points.get(i);
			String mark = ((i == this.knee) ? " knee" : "") + ((i == this.goodputPeak) ? " peak" : "");
			out.append(String.format(Locale.ROOT, first + "%11s%11s%11s%11s%11s%8d%s%n", value(p.value()),
					Distribution.format(p.outputThroughput()), Distribution.format(p.tokenGoodput()),
					Distribution.format(p.p99TtftMs()), Distribution.format(p.p99StreamP99GapMs()),
					Distribution.format(p.meanInFlight()), p.failed(), mark));
		}
		out.append("(goodput: output tokens of requests meeting every SLO / s; p99 gap: p99 across streams of "
				+ "per-stream p99 gap, ms)\n");
		out.append(kneeSentence()).append('\n');
		out.append("=".repeat(72)).append('\n');
		return out.toString();
	}

	String kneeSentence() {
		Point k = this.points.get(this.knee);
		Point g = this.points.get(this.goodputPeak);
		return "knee: " + this.parameter + " " + value(k.value()) + " (" + Distribution.format(k.outputThroughput())
				+ " tok/s at p99 TTFT " + Distribution.format(k.p99TtftMs())
				+ " ms): the point furthest above the diagonal of p99 TTFT against output throughput, both scaled "
				+ "to 0..1 over the sweep; goodput peak: " + this.parameter + " " + value(g.value()) + " ("
				+ Distribution.format(g.tokenGoodput()) + " tok/s)";
	}

	static String value(double value) {
		return (value == Math.rint(value)) ? Long.toString((long) value) : Distribution.format(value);
	}

	Map<String, Object> json() {
		Map<String, Object> json = new LinkedHashMap<>();
		json.put("parameter", this.parameter);
		List<Map<String, Object>> rows = new ArrayList<>();
		for (Point p : this.points) {
			Map<String, Object> row = new LinkedHashMap<>();
			row.put(this.parameter, p.value());
			row.put("record", p.record());
			row.put("output_throughput", BenchReport.finite(p.outputThroughput()));
			row.put("token_goodput", BenchReport.finite(p.tokenGoodput()));
			row.put("p99_ttft_ms", BenchReport.finite(p.p99TtftMs()));
			row.put("p99_stream_p99_gap_ms", BenchReport.finite(p.p99StreamP99GapMs()));
			row.put("mean_in_flight", BenchReport.finite(p.meanInFlight()));
			row.put("failed", p.failed());
			rows.add(row);
		}
		json.put("points", rows);
		json.put("knee", this.points.get(this.knee).value());
		json.put("knee_method", "max over points of (throughput - min) / span - (p99 TTFT - min) / span");
		json.put("goodput_peak", this.points.get(this.goodputPeak).value());
		json.put("chart", SweepCommand.CHART);
		return json;
	}

	/**
	 * One point of the sweep.
	 *
	 * @param value the swept parameter's value
	 * @param record the point's record file name
	 * @param outputThroughput output tokens per second
	 * @param tokenGoodput good requests' output tokens per second
	 * @param p99TtftMs p99 TTFT
	 * @param p99StreamP99GapMs p99 across streams of the per-stream p99 gap
	 * @param meanInFlight measured mean requests in flight
	 * @param completed successful requests
	 * @param failed failed requests
	 */
	record Point(double value, String record, double outputThroughput, double tokenGoodput, double p99TtftMs,
			double p99StreamP99GapMs, double meanInFlight, int completed, int failed) {

		static Point of(double value, String record, BenchReport report) {
			return new Point(value, record, report.outputTokens / report.durationS,
					report.goodTokens / report.durationS, report.ttft.p99(), report.shape.streamP99Gap.p99(),
					report.meanInFlight, report.completed, report.failed);
		}

	}

}
