package dev.tokengap.sim;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * vLLM v1's automatic prefix caching, reduced to what costs time: which full prompt
 * blocks have been computed before. A block is known by a hash of the prompt text up to
 * its end, so two prompts share exactly the blocks of their common prefix; the least
 * recently used block is forgotten first once {@code num-kv-blocks} are known. Owned by
 * the engine thread.
 *
 * <p>
 * Simplified from vLLM: cached blocks save prefill compute, not KV memory (a hit still
 * takes its own blocks from the pool), and only prompt blocks are cached, not generated
 * ones.
 */
final class PrefixCache {

	private static final long FNV_OFFSET = 0xcbf29ce484222325L;

	private static final long FNV_PRIME = 0x100000001b3L;

	private final boolean enabled;

	private final int blockSize;

	private final Map<Long, Boolean> blocks;

	PrefixCache(boolean enabled, int blockSize, int capacity) {
		this.enabled = enabled;
		this.blockSize = blockSize;
		this.blocks = new LinkedHashMap<>(256, 0.75f, true) {

			@Override
			protected boolean removeEldestEntry(Map.Entry<Long, Boolean> eldest) {
				return size() > capacity;
			}

		};
	}

	boolean enabled() {
		return this.enabled;
	}

	/**
	 * Prompt tokens of the sequence already in the cache, in whole blocks from its start.
	 * As vLLM, the prompt's last token is always computed, for its logits, when nothing
	 * was generated yet.
	 */
	int cachedTokens(SimSequence sequence) {
		if (!this.enabled) {
			return 0;
		}
		long[] hashes = hashes(sequence);
		int usable = Math.min(sequence.promptTokens, sequence.totalTokens() - 1) / this.blockSize;
		int hit = 0;
		while (hit < Math.min(usable, hashes.length) && this.blocks.containsKey(hashes[hit])) {
			hit++;
		}
		return hit * this.blockSize;
	}

	/** Marks the first {@code tokens} cached tokens of the sequence as just used. */
	void touch(SimSequence sequence, int tokens) {
		long[] hashes = hashes(sequence);
		for (int i = 0; i < tokens / this.blockSize; i++) {
			this.blocks.get(hashes[i]);
		}
	}

	/** Adds the sequence's prompt blocks that are now fully computed. */
	void computed(SimSequence sequence) {
		if (!this.enabled) {
			return;
		}
		long[] hashes = hashes(sequence);
		int full = Math.min(Math.min(sequence.computed, sequence.promptTokens) / this.blockSize, hashes.length);
		for (int i = sequence.cachedBlocksAdded; i < full; i++) {
			this.blocks.put(hashes[i], Boolean.TRUE);
		}
		sequence.cachedBlocksAdded = Math.max(sequence.cachedBlocksAdded, full);
	}

	int size() {
		return this.blocks.size();
	}

	private long[] hashes(SimSequence sequence) {
		if (sequence.blockHashes == null) {
			sequence.blockHashes = hashes(sequence.promptText, sequence.promptTokens, this.blockSize);
		}
		return sequence.blockHashes;
	}

	/**
	 * The hash of the prompt text up to the end of each full block. A token is taken to
	 * span the text's average characters per token, so the same prefix ends at the same
	 * character in prompts of any length.
	 */
	static long[] hashes(String promptText, int promptTokens, int blockSize) {
		if (promptText == null || promptText.isEmpty()) {
			return new long[0];
		}
		int charsPerBlock = Math.max(1, promptText.length() / promptTokens) * blockSize;
		int full = Math.min(promptTokens / blockSize, promptText.length() / charsPerBlock);
		long[] hashes = new long[full];
		long hash = FNV_OFFSET;
		for (int block = 0; block < full; block++) {
			for (int i = block * charsPerBlock; i < (block + 1) * charsPerBlock; i++) {
				hash = (hash ^ promptText.charAt(i)) * FNV_PRIME;
			}
			hashes[block] = hash;
		}
		return hashes;
	}

}
