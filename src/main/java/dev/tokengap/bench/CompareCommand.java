package dev.tokengap.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code tokengap bench compare BASE.json NEW.json}: two runs' records side by side and a
 * verdict a pipeline can act on. Given several BASE records (repeats of one
 * configuration), each figure of NEW is held to the worst of them: the repeats' own
 * spread is tolerated on top of the gate's. Exit 0 when no gated figure of NEW is worse
 * than BASE's beyond its tolerance, 1 when one is (each named with both values), 2 on a
 * usage error or when the runs do not compare (another workload, or not a run record).
 */
final class CompareCommand {

	static final String USAGE = """
			usage: tokengap bench compare BASE.json [BASE2.json ...] NEW.json [options]
			  several BASE runs (repeats of one configuration): NEW is held to the worst of them, so
			  their own spread widens the tolerance
			  --gate KEY:REL:ABS ...    gate a figure of the record: NEW fails when worse than BASE by more
			                            than max(REL x |BASE|, ABS); KEY:off drops a gate
			  --no-default-gates        only the gates given
			default gates: %s
			""";

	/** The figures shown side by side, gated or not. */
	private static final List<String> SHOWN = List.of("completed", "failed", "request_throughput", "output_throughput",
			"token_goodput", "request_goodput", "smooth_stream_goodput", "unstable_stream_share", "median_ttft_ms",
			"p99_ttft_ms", "median_tpot_ms", "p99_tpot_ms", "median_itl_ms", "p99_itl_ms", "p99_e2el_ms",
			"p99_max_gap_ms", "median_stream_p99_gap_ms", "p99_stream_p99_gap_ms", "mean_in_flight");

	private CompareCommand() {
	}

	static int run(String[] args, PrintStream out, PrintStream err) {
		List<String> files = new ArrayList<>();
		Map<String, Gate> gates;
		try {
			gates = gates(args, files);
			if (files.size() < 2) {
				throw new IllegalArgumentException("expected BASE.json and NEW.json");
			}
		}
		catch (IllegalArgumentException ex) {
			err.println("bench compare: " + ex.getMessage());
			err.printf(USAGE, Gate.DEFAULTS.values());
			return 2;
		}
		List<JsonNode> bases = new ArrayList<>();
		JsonNode next;
		try {
			for (String file : files.subList(0, files.size() - 1)) {
				bases.add(read(Path.of(file)));
			}
			next = read(Path.of(files.get(files.size() - 1)));
		}
		catch (IllegalArgumentException ex) {
			err.println("bench compare: " + ex.getMessage());
			return 2;
		}
		for (JsonNode base : bases) {
			List<String> differences = workloadDifferences(base, next);
			if (!differences.isEmpty()) {
				err.println("bench compare: the runs do not compare, their workloads differ: "
						+ String.join(", ", differences));
				return 2;
			}
		}
		return verdict(bases, next, gates, out);
	}

	private static Map<String, Gate> gates(String[] args, List<String> files) {
		Map<String, Gate> gates = new LinkedHashMap<>(Gate.DEFAULTS);
		List<Gate> given = new ArrayList<>();
		List<String> off = new ArrayList<>();
		boolean defaults = true;
		for (int i = 0; i < args.length; i++) {
			switch (args[i]) {
				case "--no-default-gates" -> defaults = false;
				case "--gate" -> {
					while (i + 1 < args.length && !args[i + 1].startsWith("--")) {
						String spec = args[++i];
						if (spec.endsWith(":off")) {
							off.add(spec.substring(0, spec.length() - 4));
						}
						else {
							given.add(Gate.parse(spec));
						}
					}
				}
				default -> {
					if (args[i].startsWith("--")) {
						throw new IllegalArgumentException("unknown option " + args[i]);
					}
					files.add(args[i]);
				}
			}
		}
		if (!defaults) {
			gates.clear();
		}
		given.forEach((gate) -> gates.put(gate.key(), gate));
		off.forEach(gates::remove);
		return gates;
	}

	static JsonNode read(Path file) {
		JsonNode node;
		try {
			node = JsonMapper.builder().build().readTree(Files.readString(file));
		}
		catch (IOException | JacksonException ex) {
			throw new IllegalArgumentException("could not read " + file + ": " + ex.getMessage());
		}
		if (!RunRecord.SCHEMA.equals(node.path("schema").asString(""))) {
			throw new IllegalArgumentException(file + " is not a tokengap bench record (no \"schema\": \""
					+ RunRecord.SCHEMA + "\"); write one with tokengap bench --json");
		}
		if (node.path("schema_version").asInt(-1) != RunRecord.SCHEMA_VERSION) {
			throw new IllegalArgumentException(file + " has schema_version " + node.path("schema_version")
					+ "; this tokengap reads " + RunRecord.SCHEMA_VERSION);
		}
		return node;
	}

	/** The workload keys whose values differ, each with both values. */
	static List<String> workloadDifferences(JsonNode base, JsonNode next) {
		List<String> differences = new ArrayList<>();
		JsonNode a = base.path("workload");
		JsonNode b = next.path("workload");
		for (String key : a.propertyNames()) {
			if (!a.get(key).equals(b.path(key))) {
				differences.add(key + " " + a.get(key) + " vs " + b.path(key));
			}
		}
		for (String key : b.propertyNames()) {
			if (!a.has(key)) {
				differences.add(key + " missing vs " + b.get(key));
			}
		}
		return differences;
	}

	private static int verdict(List<JsonNode> bases, JsonNode next, Map<String, Gate> gates, PrintStream out) {
		out.print(BenchReport.center(" tokengap bench compare ", '=') + "\n");
		out.printf(Locale.ROOT, "%-26s%14s%14s%10s  %s%n", "", (bases.size() > 1) ? "worst base" : "base", "new",
				"change", "gate");
		List<String> figures = new ArrayList<>(SHOWN);
		gates.keySet().stream().filter((k) -> !figures.contains(k)).forEach(figures::add);
		List<String> failures = new ArrayList<>();
		for (String key : figures) {
			Gate gate = gates.getOrDefault(key, new Gate(key, 0, 0));
			double a = gate.worst(bases.stream().mapToDouble((base) -> number(base, key)).toArray());
			double b = number(next, key);
			Interval interval = Interval.of(gate, bases, next);
			gate = gates.get(key);
			String verdict = "";
			if (gate != null) {
				boolean worse = (interval != null) ? gate.worse(interval.base(), interval.next()) : gate.worse(a, b);
				verdict = gate + (worse ? "  FAIL" : "  ok") + ((interval != null) ? " " + interval : "");
				if (worse) {
					failures.add(key + " " + Distribution.format(a) + " -> " + Distribution.format(b) + " ("
							+ ((interval != null) ? interval + ", " : "") + gate + ")");
				}
			}
			out.printf(Locale.ROOT, "%-26s%14s%14s%10s  %s%n", key, Distribution.format(a), Distribution.format(b),
					change(a, b), verdict);
		}
		out.print("=".repeat(72) + "\n");
		if (failures.isEmpty()) {
			out.println("verdict: PASS (" + gates.size() + " gates)");
			return 0;
		}
		out.println("verdict: FAIL: " + String.join("; ", failures));
		return 1;
	}

	/**
	 * The bounds a figure with a confidence interval in both records is compared by: for
	 * a figure better lower BASE's upper bound (the worst of the repeats') against NEW's
	 * lower bound, for one better higher BASE's lower bound against NEW's upper bound, so
	 * a figure that moved within what its run's own sample size allows does not fail.
	 *
	 * @param base BASE's bound
	 * @param next NEW's bound
	 */
	record Interval(double base, double next) {

		static Interval of(Gate gate, List<JsonNode> bases, JsonNode next) {
			// lower is better: BASE's upper bound against NEW's lower one; higher: the
			// reverse
			String baseKey = (gate.higherIsBetter() ? "ci_low_" : "ci_high_") + gate.key();
			String nextKey = (gate.higherIsBetter() ? "ci_high_" : "ci_low_") + gate.key();
			if (!next.has(nextKey) || !bases.stream().allMatch((b) -> b.has(baseKey))) {
				return null;
			}
			return new Interval(gate.worst(bases.stream().mapToDouble((b) -> number(b, baseKey)).toArray()),
					number(next, nextKey));
		}

		@Override
		public String toString() {
			return "95% CI bounds " + Distribution.format(this.base) + " vs " + Distribution.format(this.next);
		}

	}

	/** A figure of the record, NaN when missing or null. */
	static double number(JsonNode record, String key) {
		JsonNode value = record.path(key);
		return value.isNumber() ? value.asDouble() : Double.NaN;
	}

	private static String change(double a, double b) {
		if (Double.isNaN(a) || Double.isNaN(b) || a == 0) {
			return "-";
		}
		return String.format(Locale.ROOT, "%+.1f%%", 100 * (b - a) / Math.abs(a));
	}

}
