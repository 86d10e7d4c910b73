package dev.tokengap.timing;

import java.util.Arrays;

/**
 * The gaps between the events of one stream, in fixed memory however long the stream
 * runs: the exact worst gap plus a log-linear histogram good for nearest-rank
 * percentiles.
 * <p>
 * Gaps are rounded to whole microseconds. Below 64 µs every microsecond has its own
 * bucket; above, each power of two is split into 32 buckets (1.6% to 3.1% wide), up to
 * 2^33 µs (about 2.4 hours); longer gaps land in the last bucket. Percentiles report the
 * middle of their bucket, so they are within 1.6% of the true gap from 32 µs up.
 * <p>
 * A stream's gaps fill few of the 928 buckets: a 100-token stream of 20 ms gaps with a
 * few milliseconds of jitter lands in about ten. So the counts start sparse, as a sorted
 * array of (bucket, count) pairs of 8, 16, 32 and at most {@value #SPARSE_LIMIT} pairs
 * (80 to 528 bytes), and become the dense 928 int counts (3.6 KiB) only when a stream
 * spreads over more buckets than that. Once dense, recording never allocates. Not
 * thread-safe.
 */
public final class GapRecord {

	private static final int SUB_BUCKET_BITS = 5;

	private static final int SUB_BUCKETS = 1 << SUB_BUCKET_BITS;

	/**
	 * Highest power of two with its own sub-buckets; values from 2^(MAX_EXPONENT + 1) µs
	 * clamp.
	 */
	private static final int MAX_EXPONENT = 32;

	private static final int BUCKETS = (MAX_EXPONENT - SUB_BUCKET_BITS + 2) * SUB_BUCKETS;

	private static final long LIMIT_MICROS = 1L << (MAX_EXPONENT + 1);

	private static final int SPARSE_INITIAL = 8;

	/** Most distinct buckets kept sparse; one more makes the counts dense. */
	static final int SPARSE_LIMIT = 64;

	/**
	 * Sparse counts while {@link #counts} is null: {@code (bucket << 32) | count} in
	 * ascending bucket order, {@link #used} of them.
	 */
	private long[] sparse;

	private int used;

	/** Dense counts, indexed by bucket, once the gaps spread over many buckets. */
	private int[] counts;

	private int count;

	private long maxNanos;

	/** The lowest bucket in use, while {@link #count} is not zero. */
	private int lowestBucket;

	/**
	 * Records one gap.
	 * @param gapNanos the gap in nanoseconds; a negative gap (clock adjusted) counts as 0
	 */
	public void add(long gapNanos) {
		long nanos = Math.max(gapNanos, 0);
		int bucket = bucket(nanos);
		if (this.counts != null) {
			this.counts[bucket]++;
		}
		else {
			addSparse(bucket);
		}
		this.lowestBucket = (this.count == 0) ? bucket : Math.min(this.lowestBucket, bucket);
		this.count++;
		this.maxNanos = Math.max(this.maxNanos, nanos);
	}

	private void addSparse(int bucket) {
		long[] entries = this.sparse;
		if (entries == null) {
			entries = new long[SPARSE_INITIAL];
			this.sparse = entries;
		}
		int low = 0;
		int high = this.used - 1;
		while (low <= high) {
			int mid = (low + high) >>> 1;
			int at = (int) (entries[mid] >>> 32);
			if (at < bucket) {
				low = mid + 1;
			}
			else if (at > bucket) {
				high = mid - 1;
			}
			else {
				entries[mid]++;
				return;
			}
		}
		if (this.used == SPARSE_LIMIT) {
			this.counts = dense(entries, this.used);
			this.counts[bucket]++;
			this.sparse = null;
			return;
		}
		if (this.used == entries.length) {
			entries = Arrays.copyOf(entries, Math.min(this.used * 2, SPARSE_LIMIT));
			this.sparse = entries;
		}
		System.arraycopy(entries, low, entries, low + 1, this.used - low);
		entries[low] = ((long) bucket << 32) | 1;
		this.used++;
	}

	private static int[] dense(long[] entries, int used) {
		int[] counts = new int[BUCKETS];
		for (int i = 0; i < used; i++) {
			counts[(int) (entries[i] >>> 32)] = (int) entries[i];
		}
		return counts;
	}

	/**
	 * Number of gaps recorded.
	 * @return the number of {@link #add} calls since creation or the last {@link #reset}
	 */
	public int count() {
		return this.count;
	}

	/**
	 * The worst gap, exactly.
	 * @return the largest gap in nanoseconds, 0 when empty
	 */
	public long maxNanos() {
		return this.maxNanos;
	}

	/**
	 * The nearest-rank percentile: the {@code ceil(p * count())}-th smallest gap,
	 * approximated by the middle of its bucket but never above {@link #maxNanos()}.
	 * @param p the fraction in (0, 1]; 1 gives exactly {@link #maxNanos()}
	 * @return the percentile in nanoseconds, 0 when empty
	 */
	public long percentileNanos(double p) {
		if (!(p > 0 && p <= 1)) {
			throw new IllegalArgumentException("p must be in (0, 1] but was " + p);
		}
		if (this.count == 0 || p == 1) {
			return this.maxNanos;
		}
		long rank = rank(p, this.count);
		long seen = 0;
		if (this.counts == null) {
			for (int i = 0; i < this.used; i++) {
				long entry = this.sparse[i];
				seen += (int) entry;
				if (seen >= rank) {
					return Math.min(midpointNanos((int) (entry >>> 32)), this.maxNanos);
				}
			}
			return this.maxNanos;
		}
		for (int bucket = 0; bucket < BUCKETS; bucket++) {
			seen += this.counts[bucket];
			if (seen >= rank) {
				return Math.min(midpointNanos(bucket), this.maxNanos);
			}
		}
		return this.maxNanos;
	}

	/**
	 * A bound no percentile is below, in constant time: the middle of the lowest bucket
	 * in use, never above {@link #maxNanos()}. Enough for a caller that only needs to
	 * know that a percentile is above some value, without walking the counts.
	 * @return nanoseconds, 0 when empty
	 */
	public long lowerBoundNanos() {
		return (this.count == 0) ? 0 : Math.min(midpointNanos(this.lowestBucket), this.maxNanos);
	}

	/**
	 * Forgets all gaps, keeping the counts' arrays for the next stream.
	 */
	public void reset() {
		if (this.counts != null && this.count > 0) {
			Arrays.fill(this.counts, 0);
		}
		this.used = 0;
		this.count = 0;
		this.maxNanos = 0;
	}

	/**
	 * {@code ceil(p * n)}, corrected where binary floating point lands just above a whole
	 * rank (0.07 * 100 is 7.000000000000001).
	 */
	static long rank(double p, int n) {
		long rank = (long) Math.ceil(p * n);
		if (rank > 1 && (double) (rank - 1) / n >= p) {
			rank--;
		}
		return Math.max(1, Math.min(rank, n));
	}

	static int bucket(long nanos) {
		long micros = nanos / 1000 + ((nanos % 1000 >= 500) ? 1 : 0);
		if (micros < 2 * SUB_BUCKETS) {
			return (int) micros;
		}
		if (micros >= LIMIT_MICROS) {
			return BUCKETS - 1;
		}
		int shift = 63 - Long.numberOfLeadingZeros(micros) - SUB_BUCKET_BITS;
		return ((shift + 1) << SUB_BUCKET_BITS) + (int) ((micros >>> shift) & (SUB_BUCKETS - 1));
	}

	/**
	 * The middle of a bucket's whole microseconds; with rounding to the nearest
	 * microsecond that is also the middle of the nanoseconds it holds, and exact for
	 * one-microsecond buckets.
	 */
	static long midpointNanos(int bucket) {
		if (bucket < SUB_BUCKETS) {
			return bucket * 1000L;
		}
		int shift = (bucket >>> SUB_BUCKET_BITS) - 1;
		long low = (long) (SUB_BUCKETS + (bucket & (SUB_BUCKETS - 1))) << shift;
		long width = 1L << shift;
		return low * 1000 + (width - 1) * 500;
	}

}
