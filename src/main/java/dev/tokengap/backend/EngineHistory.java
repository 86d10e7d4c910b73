package dev.tokengap.backend;

import java.util.concurrent.locks.StampedLock;

/**
 * The last few minutes of {@link EngineSample}s in fixed memory: a ring of parallel
 * primitive arrays, oldest overwritten first.
 *
 * <p>
 * One writer (the scraper, a few times a second) and readers on other threads (spike
 * attribution reads its windows on its own thread, never on an event loop). Reads are
 * optimistic, as in {@link StampedLock}'s own example: copy without locking, then check
 * that no append ran meanwhile; only when one did is the copy repeated under the read
 * lock, which waits at most for one append (a few array stores). Readers never block each
 * other and the writer never waits for a long read.
 */
public final class EngineHistory {

	/** Five minutes at the default 250 ms scrape interval. */
	public static final int DEFAULT_CAPACITY = 1200;

	private static final EngineSample[] NONE = {};

	private final StampedLock lock = new StampedLock();

	private final int capacity;

	private final long[] nanos;

	private final double[] running;

	private final double[] waiting;

	private final double[] swapped;

	private final double[] kvUsage;

	private final double[] preemptions;

	private final double[] promptTokens;

	private final double[] generationTokens;

	private final double[] waitingForCapacity;

	private final double[] promptTokensComputed;

	private final double[] prefillSeconds;

	private final double[] prefillRequests;

	private final double[] prefillComputedTokens;

	private final double[] finishedRequests;

	private final double[] finishedRequestPreemptions;

	// Samples ever appended; the newest is at (appended - 1) % capacity.
	private long appended;

	private volatile int engines;

	/** Creates a history of {@link #DEFAULT_CAPACITY} samples. */
	public EngineHistory() {
		this(DEFAULT_CAPACITY);
	}

	/**
	 * Creates a history.
	 * @param capacity the number of samples kept
	 */
	public EngineHistory(int capacity) {
		if (capacity < 1) {
			throw new IllegalArgumentException("capacity must be positive, got " + capacity);
		}
		this.capacity = capacity;
		this.nanos = new long[capacity];
		this.running = new double[capacity];
		this.waiting = new double[capacity];
		this.swapped = new double[capacity];
		this.kvUsage = new double[capacity];
		this.preemptions = new double[capacity];
		this.promptTokens = new double[capacity];
		this.generationTokens = new double[capacity];
		this.waitingForCapacity = new double[capacity];
		this.promptTokensComputed = new double[capacity];
		this.prefillSeconds = new double[capacity];
		this.prefillRequests = new double[capacity];
		this.prefillComputedTokens = new double[capacity];
		this.finishedRequests = new double[capacity];
		this.finishedRequestPreemptions = new double[capacity];
	}

	/**
	 * Adds a sample as the newest, dropping the oldest when full. Samples must come in
	 * clock order so that windows can be searched: an older one than the newest is
	 * refused.
	 * @param sample the sample
	 * @return whether it was added
	 */
	public boolean append(EngineSample sample) {
		long stamp = this.lock.writeLock();
		try {
			if (this.appended > 0 && sample.nanos() < this.nanos[index(this.appended - 1)]) {
				return false;
			}
			int i = index(this.appended);
			this.nanos[i] = sample.nanos();
			this.running[i] = sample.running();
			this.waiting[i] = sample.waiting();
			this.swapped[i] = sample.swapped();
			this.kvUsage[i] = sample.kvUsage();
			this.preemptions[i] = sample.preemptions();
			this.promptTokens[i] = sample.promptTokens();
			this.generationTokens[i] = sample.generationTokens();
			this.waitingForCapacity[i] = sample.waitingForCapacity();
			this.promptTokensComputed[i] = sample.promptTokensComputed();
			this.prefillSeconds[i] = sample.prefillSeconds();
			this.prefillRequests[i] = sample.prefillRequests();
			this.prefillComputedTokens[i] = sample.prefillComputedTokens();
			this.finishedRequests[i] = sample.finishedRequests();
			this.finishedRequestPreemptions[i] = sample.finishedRequestPreemptions();
			this.appended++;
			return true;
		}
		finally {
			this.lock.unlockWrite(stamp);
		}
	}

	/**
	 * How many samples were ever appended: it changes exactly when the history does, so a
	 * figure computed from the whole history holds until it changes.
	 * @return the count
	 */
	public long appendedCount() {
		long stamp = this.lock.tryOptimisticRead();
		long count = this.appended;
		if (!this.lock.validate(stamp)) {
			stamp = this.lock.readLock();
			try {
				count = this.appended;
			}
			finally {
				this.lock.unlockRead(stamp);
			}
		}
		return count;
	}

	/**
	 * The newest sample.
	 * @return the sample, or {@code null} when none was appended
	 */
	public EngineSample latest() {
		long stamp = this.lock.tryOptimisticRead();
		EngineSample latest = readLatest();
		if (!this.lock.validate(stamp)) {
			stamp = this.lock.readLock();
			try {
				latest = readLatest();
			}
			finally {
				this.lock.unlockRead(stamp);
			}
		}
		return latest;
	}

	/**
	 * The samples taken from {@code fromNanos} to {@code toNanos} (inclusive), plus the
	 * last one before and the first one after when they exist, so that a counter's rise
	 * across a gap can be computed even when no scrape fell inside it.
	 * @param fromNanos start of the window ({@link dev.tokengap.timing.NanoClock} time)
	 * @param toNanos end of the window
	 * @return the samples, oldest first; empty when there are none or
	 * {@code fromNanos > toNanos}
	 */
	public EngineSample[] window(long fromNanos, long toNanos) {
		if (fromNanos > toNanos) {
			return NONE;
		}
		long stamp = this.lock.tryOptimisticRead();
		EngineSample[] window = readWindow(fromNanos, toNanos);
		if (!this.lock.validate(stamp)) {
			stamp = this.lock.readLock();
			try {
				window = readWindow(fromNanos, toNanos);
			}
			finally {
				this.lock.unlockRead(stamp);
			}
		}
		return window;
	}

	/**
	 * Records how many distinct engines answered behind the scraped URL within the
	 * window.
	 * @param count the engines seen; more than 1 is a pool, which no sample describes as
	 * a whole
	 */
	public void engines(int count) {
		this.engines = count;
	}

	/**
	 * The distinct engines seen behind the scraped URL within the window.
	 * @return the count; 0 before the first scrape, more than 1 for a pool
	 */
	public int engines() {
		return this.engines;
	}

	/**
	 * Whether no sample was appended yet.
	 * @return whether the history is empty
	 */
	public boolean isEmpty() {
		return latest() == null;
	}

	/**
	 * The number of samples kept.
	 * @return the capacity given at construction
	 */
	public int capacity() {
		return this.capacity;
	}

	// The read* methods may run while an append is under way (optimistic read): they must
	// not fail on inconsistent fields, only return something the caller then discards.
	// Every index is reduced modulo the capacity, so no array access goes out of bounds.

	private EngineSample readLatest() {
		long count = this.appended;
		return (count <= 0) ? null : sample(index(count - 1));
	}

	private EngineSample[] readWindow(long fromNanos, long toNanos) {
		long count = Math.max(this.appended, 0);
		int size = (int) Math.min(count, this.capacity);
		long oldest = count - size;
		int first = Math.max(search(oldest, size, fromNanos, false) - 1, 0);
		int last = Math.min(search(oldest, size, toNanos, true) + 1, size);
		if (first >= last) {
			return NONE;
		}
		EngineSample[] window = new EngineSample[last - first];
		for (int k = 0; k < window.length; k++) {
			window[k] = sample(index(oldest + first + k));
		}
		return window;
	}

	/**
	 * The first position (0 = oldest) whose time is at or after {@code nanos}, or
	 * strictly after it when {@code after} is set; {@code size} when there is none.
	 */
	private int search(long oldest, int size, long nanos, boolean after) {
		int low = 0;
		int high = size;
		while (low < high) {
			int mid = (low + high) >>> 1;
			long t = this.nanos[index(oldest + mid)];
			if (t < nanos || (after && t == nanos)) {
				low = mid + 1;
			}
			else {
				high = mid;
			}
		}
		return low;
	}

	private EngineSample sample(int i) {
		return new EngineSample(this.nanos[i], this.running[i], this.waiting[i], this.swapped[i], this.kvUsage[i],
				this.preemptions[i], this.promptTokens[i], this.generationTokens[i], this.waitingForCapacity[i],
				this.promptTokensComputed[i], this.prefillSeconds[i], this.prefillRequests[i],
				this.prefillComputedTokens[i], this.finishedRequests[i], this.finishedRequestPreemptions[i]);
	}

	private int index(long position) {
		return (int) (position % this.capacity);
	}

}
