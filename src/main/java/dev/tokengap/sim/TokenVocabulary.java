package dev.tokengap.sim;

import java.util.SplittableRandom;

/**
 * Deterministic token texts: words from a fixed list, drawn by a generator seeded from
 * the configured seed and the prompt, so the same request always reads the same.
 */
final class TokenVocabulary {

	private static final String[] WORDS = { "the ", "model ", "token ", "stream ", "latency ", "batch ", "engine ",
			"cache ", "block ", "prefill ", "decode ", "step ", "queue ", "request ", "server ", "client ", "event ",
			"gap ", "time ", "first ", "next ", "last ", "fast ", "slow ", "steady ", "smooth ", "spike ", "signal ",
			"metric ", "trace ", "proxy ", "socket ", "write ", "flush ", "byte ", "chunk ", "line ", "word ",
			"answer ", "question ", "because ", "while ", "after ", "before ", "and ", "or ", "but ", "so ", "a ",
			"an ", "of ", "to ", "in ", "on ", "with ", "for ", "is ", "was ", "will ", "can ", "may ", "GPU ", "vLLM ",
			"hello " };

	private final long seed;

	TokenVocabulary(long seed) {
		this.seed = seed;
	}

	/**
	 * A fresh sequence of texts for one request.
	 * @param promptText the request's prompt text, part of the seed
	 * @return a generator of token texts, used by the engine thread only
	 */
	Texts textsFor(String promptText) {
		return new Texts(new SplittableRandom(this.seed * 0x9E3779B97F4A7C15L + promptText.hashCode()));
	}

	static final class Texts {

		private final SplittableRandom random;

		private Texts(SplittableRandom random) {
			this.random = random;
		}

		String next() {
			return WORDS[this.random.nextInt(WORDS.length)];
		}

	}

}
