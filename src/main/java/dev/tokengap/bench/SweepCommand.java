package dev.tokengap.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code tokengap bench sweep}: one run per concurrency limit (or request rate) of a
 * list, each with its warm-up and its record, then a summary (table, knee, goodput peak)
 * and the curves drawn into {@code sweep.png} in the output folder.
 *
 * <pre>
 * tokengap bench sweep --out sweep/ --max-concurrency 1,4,16,64 --base-url http://127.0.0.1:8080 \
 *     --num-prompts 200 --warmup 8 --goodput ttft:1000 maxgap:400
 * </pre>
 */
final class SweepCommand {

	static final String CHART = "sweep.png";

	private SweepCommand() {
	}

	static int run(String[] args, PrintStream out, PrintStream err) {
		Plan plan;
		try {
			plan = Plan.parse(args);
		}
		catch (IllegalArgumentException ex) {
			err.println("bench sweep: " + ex.getMessage());
			err.print(BenchOptions.USAGE);
			return 2;
		}
		BenchCommand.quietLogging();
		List<SweepSummary.Point> points = new ArrayList<>();
		try {
			Files.createDirectories(plan.out());
			for (double value : plan.values()) {
				BenchOptions options = plan.at(value);
				err.println("sweep: " + plan.parameter() + " " + Distribution.format(value).replace(".00", ""));
				BenchCommand.Result result = BenchCommand.execute(options, err);
				Files.writeString(options.json(), RunRecord.text(result));
				points.add(SweepSummary.Point.of(value, options.json().getFileName().toString(), result.report()));
			}
			SweepSummary summary = new SweepSummary(plan.parameter(), points);
			String table = summary.table();
			out.print(table);
			Files.writeString(plan.out().resolve("summary.txt"), table);
			Files.writeString(plan.out().resolve("summary.json"),
					JsonMapper.builder()
						.enable(SerializationFeature.INDENT_OUTPUT)
						.build()
						.writeValueAsString(summary.json()));
			SweepChart.draw(summary, plan.out().resolve(CHART));
			out.println("chart: " + plan.out().resolve(CHART));
		}
		catch (IOException ex) {
			err.println("bench sweep: " + ex.getMessage());
			return 1;
		}
		catch (IllegalArgumentException | UncheckedIOException ex) {
			err.println("bench sweep: " + ex.getMessage());
			return 2;
		}
		return points.stream().allMatch((p) -> p.completed() > 0) ? 0 : 1;
	}

	/**
	 * The swept parameter, its values, and the options every point shares.
	 *
	 * @param parameter {@code max_concurrency} or {@code request_rate}
	 * @param values the values in the order given
	 * @param base the options of the first point
	 * @param out the output folder
	 */
	record Plan(String parameter, List<Double> values, BenchOptions base, Path out) {

		static Plan parse(String[] args) {
			List<String> rest = new ArrayList<>();
			String parameter = null;
			List<Double> values = null;
			Path out = null;
			for (int i = 0; i < args.length; i++) {
				String arg = args[i];
				String name = arg.contains("=") ? arg.substring(0, arg.indexOf('=')) : arg;
				boolean swept = name.equals("--max-concurrency") || name.equals("--request-rate");
				if (swept || name.equals("--out")) {
					String value = arg.contains("=") ? arg.substring(arg.indexOf('=') + 1)
							: (i + 1 < args.length) ? args[++i] : null;
					if (value == null) {
						throw new IllegalArgumentException(name + " needs a value");
					}
					if (name.equals("--out")) {
						out = Path.of(value);
					}
					else {
						if (parameter != null) {
							throw new IllegalArgumentException("sweep one of --max-concurrency and --request-rate");
						}
						parameter = name.substring(2).replace('-', '_');
						values = list(name, value);
					}
				}
				else {
					rest.add(arg);
				}
			}
			if (out == null || parameter == null) {
				throw new IllegalArgumentException(
						"a sweep needs --out DIR and a list of --max-concurrency or " + "--request-rate values");
			}
			return new Plan(parameter, values, BenchOptions.parse(rest.toArray(String[]::new)), out);
		}

		private static List<Double> list(String name, String text) {
			List<Double> values = new ArrayList<>();
			for (String part : text.split(",")) {
				double value = Double.parseDouble(part.trim());
				if (!(value > 0) || (name.equals("--max-concurrency") && value != Math.rint(value))) {
					throw new IllegalArgumentException(name + " values must be positive"
							+ (name.equals("--max-concurrency") ? " integers" : "") + ", got " + part);
				}
				values.add(value);
			}
			return values;
		}

		BenchOptions at(double value) {
			String file = String.format(Locale.ROOT, "%s-%s.json", this.parameter.replace('_', '-'),
					Distribution.format(value).replace(".00", ""));
			BenchOptions options = "max_concurrency".equals(this.parameter) ? this.base.withMaxConcurrency((int) value)
					: this.base.withRequestRate(value);
			return options.withJson(this.out.resolve(file));
		}

	}

}
