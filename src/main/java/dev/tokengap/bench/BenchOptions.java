package dev.tokengap.bench;

import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import dev.tokengap.metrics.Endpoint;

/**
 * The options of {@code tokengap bench}, named as {@code vllm bench serve} names them.
 *
 * @param baseUrl where to send requests (tokengap or the engine), e.g.
 * {@code http://127.0.0.1:8080}
 * @param endpoint {@code chat}, {@code completions} or {@code responses}
 * @param model the model to ask for; null: the first one {@code /v1/models} lists
 * @param numPrompts requests to send
 * @param requestRate mean requests per second of the Poisson arrivals; infinite: all at
 * once
 * @param maxConcurrency most requests in flight; 0: no limit
 * @param inputLen prompt tokens, drawn uniformly
 * @param outputLen output tokens ({@code max_tokens} with {@code ignore_eos};
 * {@code max_output_tokens} for {@code responses}), drawn uniformly
 * @param seed seed of the arrivals, lengths and prompt words
 * @param goodput the SLOs a good request meets
 * @param stallThresholdMs a gap at or above this is a stall
 * @param json where to write the JSON result, or null
 * @param tokengapMetrics tokengap's {@code /actuator/prometheus}, or null
 * @param engineMetrics the engine's {@code /metrics}, or null
 * @param progress whether to print the live progress line
 */
record BenchOptions(URI baseUrl, String endpoint, String model, int numPrompts, double requestRate, int maxConcurrency,
		LengthRange inputLen, LengthRange outputLen, long seed, Slo goodput, double stallThresholdMs, Path json,
		URI tokengapMetrics, URI engineMetrics, boolean progress) {

	static final String USAGE = """
			usage: tokengap bench --base-url URL [options]
			  --base-url URL            tokengap (or the engine) to send to, e.g. http://127.0.0.1:8080
			  --endpoint chat|completions|responses
			                            /v1/chat/completions, /v1/completions or /v1/responses (default chat)
			  --model NAME              default: the first model /v1/models lists
			  --num-prompts N           requests to send (default 100)
			  --request-rate R          mean requests/s, Poisson arrivals; inf = all at once (default inf)
			  --max-concurrency N       most requests in flight (default: no limit)
			  --input-len MIN:MAX       prompt tokens, uniform (default 128:128)
			  --output-len MIN:MAX      output tokens, sent as max_tokens with ignore_eos, for responses as
			                            max_output_tokens (default 128:128)
			  --seed N                  (default 0)
			  --goodput KEY:MS ...      SLOs, keys ttft, tpot, e2el: a request is good when it meets each
			  --stall-threshold MS      a gap at or above this is a stall (default 400)
			  --json FILE               also write the result as JSON
			  --tokengap-metrics URL    tokengap's /actuator/prometheus: compare its percentiles
			  --engine-metrics URL      the engine's /metrics: compare its percentiles
			  --no-progress             no live progress line on stderr
			""";

	static BenchOptions parse(String... args) {
		Parser parser = new Parser(args);
		return parser.options();
	}

	String path() {
		return switch (this.endpoint) {
			case "chat" -> "/v1/chat/completions";
			case "responses" -> "/v1/responses";
			default -> "/v1/completions";
		};
	}

	/** The {@code endpoint} label tokengap gives this endpoint's series. */
	String endpointLabel() {
		return Endpoint.of(path()).label();
	}

	/** A uniform range of token counts, {@code MIN:MAX} or one number. */
	record LengthRange(int min, int max) {

		static LengthRange parse(String text) {
			String[] parts = text.split(":", -1);
			if (parts.length > 2) {
				throw new IllegalArgumentException("expected MIN:MAX, got " + text);
			}
			int min = Integer.parseInt(parts[0].trim());
			int max = Integer.parseInt(parts[parts.length - 1].trim());
			if (min < 1 || max < min) {
				throw new IllegalArgumentException("expected 1 <= MIN <= MAX, got " + text);
			}
			return new LengthRange(min, max);
		}

		@Override
		public String toString() {
			return (this.min == this.max) ? Integer.toString(this.min) : this.min + ":" + this.max;
		}

	}

	private static final class Parser {

		private final String[] args;

		private int next;

		Parser(String[] args) {
			this.args = args;
		}

		BenchOptions options() {
			URI baseUrl = null;
			String endpoint = "chat";
			String model = null;
			int numPrompts = 100;
			double rate = Double.POSITIVE_INFINITY;
			int maxConcurrency = 0;
			LengthRange input = new LengthRange(128, 128);
			LengthRange output = new LengthRange(128, 128);
			long seed = 0;
			Slo slo = Slo.NONE;
			double stall = 400;
			Path json = null;
			URI tokengap = null;
			URI engine = null;
			boolean progress = true;
			while (this.next < this.args.length) {
				String arg = this.args[this.next++];
				String inline = null;
				int eq = arg.indexOf('=');
				if (arg.startsWith("--") && eq > 0) {
					inline = arg.substring(eq + 1);
					arg = arg.substring(0, eq);
				}
				switch (arg) {
					case "--base-url" -> baseUrl = URI.create(trimSlash(value(arg, inline)));
					case "--endpoint" -> endpoint = endpoint(value(arg, inline));
					case "--model" -> model = value(arg, inline);
					case "--num-prompts" -> numPrompts = positive(arg, Integer.parseInt(value(arg, inline)));
					case "--request-rate" -> rate = rate(value(arg, inline));
					case "--max-concurrency" -> maxConcurrency = positive(arg, Integer.parseInt(value(arg, inline)));
					case "--input-len" -> input = LengthRange.parse(value(arg, inline));
					case "--output-len" -> output = LengthRange.parse(value(arg, inline));
					case "--seed" -> seed = Long.parseLong(value(arg, inline));
					case "--goodput" -> slo = Slo.parse(values(arg, inline));
					case "--stall-threshold" -> stall = Double.parseDouble(value(arg, inline));
					case "--json" -> json = Path.of(value(arg, inline));
					case "--tokengap-metrics" -> tokengap = URI.create(value(arg, inline));
					case "--engine-metrics" -> engine = URI.create(value(arg, inline));
					case "--no-progress" -> progress = false;
					default -> throw new IllegalArgumentException("unknown option " + arg);
				}
			}
			if (baseUrl == null) {
				throw new IllegalArgumentException("--base-url is required");
			}
			if (!(stall > 0)) {
				throw new IllegalArgumentException("--stall-threshold must be positive");
			}
			return new BenchOptions(baseUrl, endpoint, model, numPrompts, rate, maxConcurrency, input, output, seed,
					slo, stall, json, tokengap, engine, progress);
		}

		private String value(String name, String inline) {
			if (inline != null) {
				return inline;
			}
			if (this.next >= this.args.length) {
				throw new IllegalArgumentException(name + " needs a value");
			}
			return this.args[this.next++];
		}

		/** One or more values, up to the next option (argparse's nargs="+"). */
		private List<String> values(String name, String inline) {
			List<String> values = new ArrayList<>();
			if (inline != null) {
				values.add(inline);
			}
			while (this.next < this.args.length && !this.args[this.next].startsWith("--")) {
				values.add(this.args[this.next++]);
			}
			if (values.isEmpty()) {
				throw new IllegalArgumentException(name + " needs a value");
			}
			return values;
		}

		private static String endpoint(String value) {
			String e = value.startsWith("/v1/") ? value.substring(4) : value;
			e = "chat/completions".equals(e) ? "chat" : e;
			if (!"chat".equals(e) && !"completions".equals(e) && !"responses".equals(e)) {
				throw new IllegalArgumentException("--endpoint must be chat, completions or responses, got " + value);
			}
			return e;
		}

		private static double rate(String value) {
			if ("inf".equalsIgnoreCase(value)) {
				return Double.POSITIVE_INFINITY;
			}
			double rate = Double.parseDouble(value);
			if (!(rate > 0)) {
				throw new IllegalArgumentException("--request-rate must be positive or inf");
			}
			return rate;
		}

		private static int positive(String name, int value) {
			if (value < 1) {
				throw new IllegalArgumentException(name + " must be at least 1");
			}
			return value;
		}

		private static String trimSlash(String url) {
			return url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
		}

	}

}
