package dev.tokengap.bench;

import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

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
 * @param warmup requests sent first and excluded from every figure
 * @param dataset a JSONL file of prompts, or null for drawn prompts
 * @param datasetSampled whether the dataset's prompts are drawn with the seed rather than
 * replayed in order
 * @param goodput the SLOs a good request meets
 * @param stallThresholdMs a gap at or above this is a stall
 * @param json where to write the JSON result, or null
 * @param tokengapMetrics tokengap's {@code /actuator/prometheus}, or null
 * @param engineMetrics the engine's {@code /metrics}, or null
 * @param progress whether to print the live progress line
 * @param headers headers sent with every request, as vLLM's {@code --header}
 */
record BenchOptions(URI baseUrl, String endpoint, String model, int numPrompts, double requestRate, int maxConcurrency,
		LengthRange inputLen, LengthRange outputLen, long seed, int warmup, Path dataset, boolean datasetSampled,
		Slo goodput, double stallThresholdMs, Path json, URI tokengapMetrics, URI engineMetrics, boolean progress,
		Map<String, String> headers) {

	static final String USAGE = """
			usage: tokengap bench --base-url URL [options]
			       tokengap bench compare BASE.json NEW.json [--gate KEY:REL:ABS ...]
			       tokengap bench sweep --out DIR --max-concurrency N,N,... | --request-rate R,R,... [options]
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
			  --warmup N                requests sent first, excluded from every figure (default 0)
			  --dataset FILE            JSONL prompts, {"prompt": ...} or ShareGPT {"conversations": [...]}
			  --dataset-order in-order|sampled
			                            replay the dataset in order, or draw with the seed (default in-order)
			  --goodput KEY:MS ...      SLOs, keys ttft, tpot, e2el, maxgap: a request is good when it meets each
			  --stall-threshold MS      a gap at or above this is a stall (default 400)
			  --json FILE               also write the result as JSON
			  --tokengap-metrics URL    tokengap's /actuator/prometheus: compare its percentiles
			  --engine-metrics URL      the engine's /metrics: compare its percentiles
			  --no-progress             no live progress line on stderr
			  --header KEY=VALUE ...    headers sent with every request (not part of the workload)
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

	/** The same run with another concurrency limit (0: none), for a sweep's point. */
	BenchOptions withMaxConcurrency(int limit) {
		return new BenchOptions(this.baseUrl, this.endpoint, this.model, this.numPrompts, this.requestRate, limit,
				this.inputLen, this.outputLen, this.seed, this.warmup, this.dataset, this.datasetSampled, this.goodput,
				this.stallThresholdMs, this.json, this.tokengapMetrics, this.engineMetrics, this.progress,
				this.headers);
	}

	/** The same run at another request rate, for a sweep's point. */
	BenchOptions withRequestRate(double rate) {
		return new BenchOptions(this.baseUrl, this.endpoint, this.model, this.numPrompts, rate, this.maxConcurrency,
				this.inputLen, this.outputLen, this.seed, this.warmup, this.dataset, this.datasetSampled, this.goodput,
				this.stallThresholdMs, this.json, this.tokengapMetrics, this.engineMetrics, this.progress,
				this.headers);
	}

	/** The same run writing its record to {@code file}. */
	BenchOptions withJson(Path file) {
		return new BenchOptions(this.baseUrl, this.endpoint, this.model, this.numPrompts, this.requestRate,
				this.maxConcurrency, this.inputLen, this.outputLen, this.seed, this.warmup, this.dataset,
				this.datasetSampled, this.goodput, this.stallThresholdMs, file, this.tokengapMetrics,
				this.engineMetrics, this.progress, this.headers);
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
			int warmup = 0;
			Path dataset = null;
			boolean sampled = false;
			Slo slo = Slo.NONE;
			double stall = 400;
			Path json = null;
			URI tokengap = null;
			URI engine = null;
			boolean progress = true;
			Map<String, String> headers = new LinkedHashMap<>();
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
					case "--warmup" -> warmup = notNegative(arg, Integer.parseInt(value(arg, inline)));
					case "--dataset" -> dataset = Path.of(value(arg, inline));
					case "--dataset-order" -> sampled = datasetOrder(value(arg, inline));
					case "--goodput" -> slo = Slo.parse(values(arg, inline));
					case "--stall-threshold" -> stall = Double.parseDouble(value(arg, inline));
					case "--json" -> json = Path.of(value(arg, inline));
					case "--tokengap-metrics" -> tokengap = URI.create(value(arg, inline));
					case "--engine-metrics" -> engine = URI.create(value(arg, inline));
					case "--no-progress" -> progress = false;
					case "--header" -> values(arg, inline).forEach((h) -> header(headers, h));
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
					warmup, dataset, sampled, slo, stall, json, tokengap, engine, progress, Map.copyOf(headers));
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

		private static void header(Map<String, String> headers, String pair) {
			int eq = pair.indexOf('=');
			if (eq <= 0) {
				throw new IllegalArgumentException("--header takes KEY=VALUE, got " + pair);
			}
			headers.put(pair.substring(0, eq).trim(), pair.substring(eq + 1).trim());
		}

		private static int notNegative(String name, int value) {
			if (value < 0) {
				throw new IllegalArgumentException(name + " must not be negative");
			}
			return value;
		}

		private static boolean datasetOrder(String value) {
			return switch (value) {
				case "in-order" -> false;
				case "sampled" -> true;
				default -> throw new IllegalArgumentException("--dataset-order is in-order or sampled, got " + value);
			};
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
