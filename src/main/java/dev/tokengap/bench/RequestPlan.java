package dev.tokengap.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import tools.jackson.databind.json.JsonMapper;

/**
 * The requests of one run, drawn from the seed before the first is sent: each one's
 * arrival (Poisson: exponential gaps at the request rate, or all at once), prompt and
 * output length.
 */
final class RequestPlan {

	/**
	 * Three-letter words: about one token each in common tokenizers, and exactly one
	 * (four characters with the space) for the simulator's estimate.
	 */
	private static final String[] WORDS = { "the", "and", "for", "you", "not", "are", "all", "new", "one", "can", "was",
			"had", "but", "out", "use", "day", "way", "how", "now", "see", "two", "may", "get", "any", "own", "say",
			"old", "big", "red", "sun", "sea", "map", "cat", "dog", "box", "key" };

	/**
	 * One request to send.
	 *
	 * @param arrivalNanos when to send it, from the start of the run
	 * @param promptTokens the prompt's length in tokens
	 * @param maxTokens the output tokens asked for ({@code max_tokens}, or
	 * {@code max_output_tokens})
	 * @param body the JSON request body
	 */
	record Request(long arrivalNanos, int promptTokens, int maxTokens, String body) {
	}

	private static final JsonMapper JSON = JsonMapper.builder().build();

	private RequestPlan() {
	}

	/** The measured requests. */
	static List<Request> of(BenchOptions options, String model) {
		return of(options, model, PromptDataset.load(options.dataset()));
	}

	static List<Request> of(BenchOptions options, String model, PromptDataset dataset) {
		return plan(options, model, dataset, new SplittableRandom(options.seed()), options.numPrompts(),
				options.warmup(), options.requestRate());
	}

	/**
	 * The warm-up requests, sent together (up to the concurrency limit) before the
	 * measured ones; drawn from their own seed, so the measured requests are the same
	 * with or without warm-up. Dataset prompts in order: the warm-up takes the first.
	 */
	static List<Request> warmup(BenchOptions options, String model, PromptDataset dataset) {
		return plan(options, model, dataset, new SplittableRandom(options.seed() ^ 0x5DEECE66DL), options.warmup(), 0,
				Double.POSITIVE_INFINITY);
	}

	private static List<Request> plan(BenchOptions options, String model, PromptDataset dataset,
			SplittableRandom random, int count, int firstPrompt, double rate) {
		List<Request> requests = new ArrayList<>(count);
		double arrival = 0;
		for (int i = 0; i < count; i++) {
			if (i > 0 && Double.isFinite(rate)) {
				arrival += -Math.log(1 - random.nextDouble()) / rate;
			}
			int input = draw(random, options.inputLen());
			int output = draw(random, options.outputLen());
			String prompt;
			if (dataset == null) {
				prompt = prompt(random, input);
			}
			else {
				prompt = options.datasetSampled() ? dataset.prompt(random.nextInt(dataset.size()))
						: dataset.prompt(firstPrompt + i);
				input = PromptDataset.estimateTokens(prompt);
			}
			requests.add(new Request((long) (arrival * 1e9), input, output,
					body(options.endpoint(), model, prompt, output)));
		}
		return requests;
	}

	private static int draw(SplittableRandom random, BenchOptions.LengthRange range) {
		return (range.min() == range.max()) ? range.min() : random.nextInt(range.min(), range.max() + 1);
	}

	private static String prompt(SplittableRandom random, int tokens) {
		StringBuilder text = new StringBuilder(tokens * 4);
		for (int i = 0; i < tokens; i++) {
			text.append(WORDS[random.nextInt(WORDS.length)]).append(' ');
		}
		return text.toString();
	}

	static String body(String endpoint, String model, String prompt, int maxTokens) {
		if ("responses".equals(endpoint)) {
			// Usage comes in response.completed unasked. Without ignore_eos the engine
			// may stop before max_output_tokens: TPOT divides by the tokens the stream
			// reports, not those asked.
			return "{\"model\":" + quote(model) + ",\"input\":" + quote(prompt) + ",\"max_output_tokens\":" + maxTokens
					+ ",\"stream\":true}";
		}
		String common = "\"model\":" + quote(model) + ",\"max_tokens\":" + maxTokens
				+ ",\"ignore_eos\":true,\"stream\":true,\"stream_options\":{\"include_usage\":true}";
		if ("chat".equals(endpoint)) {
			return "{" + common + ",\"messages\":[{\"role\":\"user\",\"content\":" + quote(prompt) + "}]}";
		}
		return "{" + common + ",\"prompt\":" + quote(prompt) + "}";
	}

	/** A JSON string (a dataset's prompts may hold any character). */
	private static String quote(String text) {
		return JSON.writeValueAsString(text);
	}

}
