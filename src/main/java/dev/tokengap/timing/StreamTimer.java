package dev.tokengap.timing;

/**
 * The gap clock of one response: when its first byte and each content-bearing event reached the
 * client, and the summary derived from that (TTFT, gaps, worst gap, jitter, stalls, TPOT).
 *
 * <p>
 * All times are client-write times in nanoseconds from one {@link NanoClock}. Updated by one
 * thread at a time (the client connection's event loop); {@link #stalledAt(long)} may be called
 * from any thread, so the two fields it reads are volatile.
 */
public final class StreamTimer {

	private final long startNanos;

	private final long stallNanos;

	private final GapRecord gaps = new GapRecord();

	private long firstByteNanos = -1;

	private long firstContentNanos = -1;

	private volatile long lastContentNanos = -1;

	private volatile boolean ended;

	private int contentEvents;

	private int stalls;

	private long completionTokens = -1;

	/**
	 * Creates a timer for a request received at {@code startNanos}.
	 * @param startNanos when the request was received
	 * @param stallNanos gaps at or above this are stalls
	 */
	public StreamTimer(long startNanos, long stallNanos) {
		this.startNanos = startNanos;
		this.stallNanos = stallNanos;
	}

	/**
	 * Notes that body bytes reached the client.
	 * @param writeNanos when the write completed
	 * @return true when these were the response's first body bytes
	 */
	public boolean onBodyWritten(long writeNanos) {
		if (this.firstByteNanos >= 0) {
			return false;
		}
		this.firstByteNanos = writeNanos;
		return true;
	}

	/**
	 * Notes that a content-bearing event reached the client.
	 * @param writeNanos when its write completed
	 * @return the gap since the previous content event in nanoseconds, or -1 for the first
	 */
	public long onContent(long writeNanos) {
		this.contentEvents++;
		long last = this.lastContentNanos;
		this.lastContentNanos = writeNanos;
		if (last < 0) {
			this.firstContentNanos = writeNanos;
			return -1;
		}
		long gap = Math.max(0, writeNanos - last);
		this.gaps.add(gap);
		if (gap >= this.stallNanos) {
			this.stalls++;
		}
		return gap;
	}

	/**
	 * Notes the cumulative {@code usage.completion_tokens} an event carried.
	 * @param tokens the token count
	 */
	public void onCompletionTokens(long tokens) {
		if (tokens >= 0) {
			this.completionTokens = tokens;
		}
	}

	/** Marks the stream ended: it no longer counts as stalled. */
	public void end() {
		this.ended = true;
	}

	/**
	 * Tells whether the stream is live and its last content event is older than the stall
	 * threshold. A stream still waiting for its first token is not stalled (it is queued).
	 * @param nowNanos the current time
	 * @return true when stalled
	 */
	public boolean stalledAt(long nowNanos) {
		long last = this.lastContentNanos;
		return !this.ended && last >= 0 && nowNanos - last > this.stallNanos;
	}

	/** @return when the last content event was written, or -1 before the first */
	public long lastContentNanos() {
		return this.lastContentNanos;
	}

	public long startNanos() {
		return this.startNanos;
	}

	/** @return request received to first body byte, or -1 when none was written */
	public long timeToFirstByteNanos() {
		return (this.firstByteNanos < 0) ? -1 : this.firstByteNanos - this.startNanos;
	}

	/** @return request received to first content event, or -1 when none was written */
	public long timeToFirstTokenNanos() {
		return (this.firstContentNanos < 0) ? -1 : this.firstContentNanos - this.startNanos;
	}

	public int contentEvents() {
		return this.contentEvents;
	}

	/** @return gaps seen (content events after the first) */
	public int gapCount() {
		return this.gaps.count();
	}

	public int stalls() {
		return this.stalls;
	}

	/** @return the worst gap, 0 with fewer than two content events */
	public long maxGapNanos() {
		return this.gaps.maxNanos();
	}

	/**
	 * Output tokens: {@code usage.completion_tokens} when the stream carried usage, else the
	 * number of content events.
	 * @return the token count
	 */
	public long outputTokens() {
		return (this.completionTokens >= 0) ? this.completionTokens : this.contentEvents;
	}

	/**
	 * Time per output token: (last content write - first content write) / (tokens - 1).
	 * @return seconds, or NaN with fewer than two tokens or content events
	 */
	public double timePerOutputTokenSeconds() {
		long tokens = outputTokens();
		if (tokens < 2 || this.contentEvents < 2) {
			return Double.NaN;
		}
		return (this.lastContentNanos - this.firstContentNanos) / 1e9 / (tokens - 1);
	}

	/**
	 * The stream's p99 gap over its p50 gap, nearest-rank on its own gaps.
	 * @return the ratio, or NaN with fewer than {@code minGaps} gaps or a zero median
	 * @param minGaps gaps needed for a meaningful ratio
	 */
	public double jitterRatio(int minGaps) {
		if (this.gaps.count() < minGaps) {
			return Double.NaN;
		}
		long p50 = this.gaps.percentileNanos(0.50);
		return (p50 <= 0) ? Double.NaN : (double) this.gaps.percentileNanos(0.99) / p50;
	}

	/**
	 * Median gap so far (used by spike detection).
	 * @return nanoseconds, 0 with no gaps
	 */
	public long medianGapNanos() {
		return this.gaps.percentileNanos(0.50);
	}

}
