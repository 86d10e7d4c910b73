package dev.tokengap.sim;

/**
 * The KV cache as a count of free blocks: the simulator needs how many blocks a sequence
 * holds, never which ones. Owned by the engine thread.
 */
final class KvBlockPool {

	private final int blockSize;

	private final int totalBlocks;

	private int freeBlocks;

	KvBlockPool(int blockSize, int totalBlocks) {
		this.blockSize = blockSize;
		this.totalBlocks = totalBlocks;
		this.freeBlocks = totalBlocks;
	}

	int blocksFor(int tokens) {
		return (tokens + this.blockSize - 1) / this.blockSize;
	}

	boolean tryTake(int blocks) {
		if (blocks > this.freeBlocks) {
			return false;
		}
		this.freeBlocks -= blocks;
		return true;
	}

	void release(int blocks) {
		this.freeBlocks += blocks;
	}

	int freeBlocks() {
		return this.freeBlocks;
	}

	int totalBlocks() {
		return this.totalBlocks;
	}

	double usage() {
		return (double) (this.totalBlocks - this.freeBlocks) / this.totalBlocks;
	}

}
