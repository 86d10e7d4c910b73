package dev.tokengap.timing;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;

/**
 * The gap clocks of one response: when its first byte and each content-bearing event
 * reached the client, one clock per choice, and the summary derived from that (TTFT,
 * gaps, worst gap, p99 gap, jitter, stalls, TPOT per choice).
 *
 * <p>
 * A gap is the time between two content events <em>of the same choice</em> ({@code n} > 1
 * interleaves one event per choice). TTFT is the first content event of any choice; the
 * worst gap, percentiles and stalls are taken over the gaps of all choices. Choices are
 * indexed as the engine numbers them; indexes from {@value #MAX_CHOICES} - 1 up share the
 * last clock.
 *
 * <p>
 * All times are nanoseconds from one {@link NanoClock}: client-write times, and the
 * upstream arrival of each event for spike attribution. Updated by one thread at a time
 * (the client connection's event loop); {@link #stalledAt(long)} may be called from any
 * thread, so the two fields it reads are published to it (the last content write with a
 * release store, which unlike a volatile one needs no fence on x86: it is written per
 * event). The per-choice arrays grow only when a new choice index appears.
 *
 * <p>
 * The upstream arrivals of the last {@value #RECENT_ARRIVALS} content events (of any
 * choice) are kept in a ring, allocated at the first one, so that spike attribution can
 * tell, for another stream's gap, whether this stream kept receiving content meanwhile;
 * {@link #recentArrivals} may be called from any thread.
 */
public final class StreamTimer {

	/** Choices with a clock of their own. */
	public static final int MAX_CHOICES = 64;

	/** Content-event arrivals kept for {@link #recentArrivals}. */
	public static final int RECENT_ARRIVALS = 128;

	private static final VarHandle RECENT_COUNT;

	private static final VarHandle LAST_CONTENT;

	static {
		try {
			RECENT_COUNT = MethodHandles.lookup().findVarHandle(StreamTimer.class, "recentCount", int.class);
			LAST_CONTENT = MethodHandles.lookup().findVarHandle(StreamTimer.class, "lastContentNanos", long.class);
		}
		catch (ReflectiveOperationException ex) {
			throw new ExceptionInInitializerError(ex);
		}
	}

	private final long startNanos;

	private final long stallNanos;

	private final GapRecord gaps = new GapRecord();

	private long firstByteNanos = -1;

	private long firstContentNanos = -1;

	/**
	 * Written through {@link #LAST_CONTENT} with release, read with acquire elsewhere.
	 */
	private long lastContentNanos = -1;

	private volatile boolean ended;

	private int contentEvents;

	private String traceId;

	private int stalls;

	/** Output tokens of the whole stream from a usage without a choice, or -1. */
	private long streamTokens = -1;

	private int choices;

	private volatile long firstArrivalNanos = -1;

	private volatile EngineReport engineReport;

	/**
	 * Written once, before the first release of {@link #recentCount}: a reader that
	 * acquires a count above 0 sees it.
	 */
	private long[] recentArrivals;

	/** Content events whose arrival is in the ring; published with release semantics. */
	@SuppressWarnings("unused")
	private int recentCount;

	private long[] choiceFirstWrite = new long[1];

	private long[] choiceLastWrite = new long[1];

	private long[] choiceLastArrival = new long[1];

	private int[] choiceEvents = new int[1];

	private long[] choiceTokens = { -1 };

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
	 * Notes that a content-bearing event of one choice reached the client.
	 * @param choice the choice index (0 for shapes without choices)
	 * @param arrivalNanos when the event's last byte was read from upstream
	 * @param writeNanos when its write completed
	 * @return the gap since the previous content event of the same choice in nanoseconds,
	 * or -1 for the choice's first
	 */
	public long onContent(int choice, long arrivalNanos, long writeNanos) {
		int c = slot(choice);
		this.contentEvents++;
		if (this.firstContentNanos < 0) {
			this.firstContentNanos = writeNanos;
			this.firstArrivalNanos = arrivalNanos;
			this.recentArrivals = new long[RECENT_ARRIVALS];
		}
		noteArrival(arrivalNanos);
		LAST_CONTENT.setRelease(this, Math.max(writeNanos, this.lastContentNanos));
		long last = this.choiceLastWrite[c];
		this.choiceLastWrite[c] = writeNanos;
		this.choiceLastArrival[c] = arrivalNanos;
		if (this.choiceEvents[c]++ == 0) {
			this.choiceFirstWrite[c] = writeNanos;
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
	 * Notes an output token count an event carried (cumulative, as vLLM's usage is).
	 * @param choice the choice it counts, or -1 for the whole stream
	 * @param tokens the token count (ignored when negative)
	 */
	public void onOutputTokens(int choice, long tokens) {
		if (tokens < 0) {
			return;
		}
		if (choice < 0) {
			this.streamTokens = tokens;
		}
		else {
			this.choiceTokens[slot(choice)] = tokens;
		}
	}

	private void noteArrival(long arrivalNanos) {
		int count = (int) RECENT_COUNT.get(this);
		this.recentArrivals[count & (RECENT_ARRIVALS - 1)] = arrivalNanos;
		RECENT_COUNT.setRelease(this, count + 1);
	}

	/**
	 * Copies the upstream arrivals of the stream's most recent content events, newest
	 * first; safe from any thread (a slot overwritten while it is read ends the copy
	 * there).
	 * @param into where to copy them; at most its length are copied
	 * @return how many were copied
	 */
	public int recentArrivals(long[] into) {
		return recentArrivals(into, Long.MIN_VALUE);
	}

	/**
	 * Copies the upstream arrivals of the stream's most recent content events, newest
	 * first, down to the first at or before {@code through} (copied too, as the last):
	 * what a reader of one window needs, and no older. Safe from any thread, as
	 * {@link #recentArrivals(long[])}.
	 * @param into where to copy them; at most its length are copied
	 * @param through the copy ends with the first arrival at or before this
	 * @return how many were copied
	 */
	public int recentArrivals(long[] into, long through) {
		int count = (int) RECENT_COUNT.getAcquire(this);
		long[] ring = this.recentArrivals;
		if (ring == null) {
			return 0;
		}
		int n = Math.min(Math.min(count, RECENT_ARRIVALS), into.length);
		long newer = Long.MAX_VALUE;
		for (int i = 0; i < n; i++) {
			long arrival = ring[(count - 1 - i) & (RECENT_ARRIVALS - 1)];
			if (arrival > newer) {
				return i;
			}
			into[i] = arrival;
			if (arrival <= through) {
				return i + 1;
			}
			newer = arrival;
		}
		return n;
	}

	/**
	 * Content events of all choices so far, as published with {@link #recentArrivals}:
	 * safe from any thread.
	 * @return the count
	 */
	public int publishedContentEvents() {
		return (int) RECENT_COUNT.getAcquire(this);
	}

	/**
	 * Whether more content events arrived than {@link #recentArrivals} keeps.
	 * @return true once the ring has wrapped
	 */
	public boolean recentArrivalsWrapped() {
		return (int) RECENT_COUNT.getAcquire(this) > RECENT_ARRIVALS;
	}

	/**
	 * @return when the stream's last content event (of any choice) arrived from upstream,
	 * or -1
	 */
	public long lastArrivalNanos() {
		int count = (int) RECENT_COUNT.getAcquire(this);
		long[] ring = this.recentArrivals;
		return (ring == null || count == 0) ? -1 : ring[(count - 1) & (RECENT_ARRIVALS - 1)];
	}

	/**
	 * Names the trace the stream belongs to, for the records made of it (spikes,
	 * exemplars).
	 * @param traceId the W3C trace id, 32 lower-case hex digits
	 */
	public void traceId(String traceId) {
		this.traceId = traceId;
	}

	/**
	 * @return the trace id of the stream's request, or null when none was named
	 */
	public String traceId() {
		return this.traceId;
	}

	/**
	 * Keeps what the engine itself reported about the stream; the first report counts.
	 * @param report the engine's figures
	 */
	public void engineReported(EngineReport report) {
		if (this.engineReport == null) {
			this.engineReport = report;
		}
	}

	/**
	 * @return what the engine reported about the stream, or null
	 */
	public EngineReport engineReport() {
		return this.engineReport;
	}

	/**
	 * @return whether the stream has ended
	 */
	public boolean isEnded() {
		return this.ended;
	}

	/**
	 * @return when the stream's first content event (of any choice) arrived from
	 * upstream, or -1
	 */
	public long firstArrivalNanos() {
		return this.firstArrivalNanos;
	}

	/** Marks the stream ended: it no longer counts as stalled. */
	public void end() {
		this.ended = true;
	}

	/**
	 * Tells whether the stream is live and its last content event (of any choice) is
	 * older than the stall threshold. A stream still waiting for its first token is not
	 * stalled (it is queued).
	 * @param nowNanos the current time
	 * @return true when stalled
	 */
	public boolean stalledAt(long nowNanos) {
		long last = (long) LAST_CONTENT.getAcquire(this);
		return !this.ended && last >= 0 && nowNanos - last > this.stallNanos;
	}

	/**
	 * When the choice's last content event was written.
	 * @param choice the choice index
	 * @return nanoseconds, or -1 before its first
	 */
	public long lastContentNanos(int choice) {
		int c = clockOf(choice);
		return (c < this.choices && this.choiceEvents[c] > 0) ? this.choiceLastWrite[c] : -1;
	}

	/**
	 * When the choice's last content event arrived from upstream.
	 * @param choice the choice index
	 * @return nanoseconds, or -1 before its first
	 */
	public long lastArrivalNanos(int choice) {
		int c = clockOf(choice);
		return (c < this.choices && this.choiceEvents[c] > 0) ? this.choiceLastArrival[c] : -1;
	}

	/**
	 * Content events of one choice so far.
	 * @param choice the choice index
	 * @return the count
	 */
	public int contentEvents(int choice) {
		int c = clockOf(choice);
		return (c < this.choices) ? this.choiceEvents[c] : 0;
	}

	public long startNanos() {
		return this.startNanos;
	}

	/**
	 * @return request received to first body byte, or -1 when none was written
	 */
	public long timeToFirstByteNanos() {
		return (this.firstByteNanos < 0) ? -1 : this.firstByteNanos - this.startNanos;
	}

	/**
	 * @return request received to first content event of any choice, or -1 when none was
	 * written
	 */
	public long timeToFirstTokenNanos() {
		return (this.firstContentNanos < 0) ? -1 : this.firstContentNanos - this.startNanos;
	}

	/**
	 * @return content events of all choices
	 */
	public int contentEvents() {
		return this.contentEvents;
	}

	/**
	 * @return choice clocks in use: the highest choice index seen plus one
	 */
	public int choices() {
		return this.choices;
	}

	/**
	 * @return gaps seen, over all choices
	 */
	public int gapCount() {
		return this.gaps.count();
	}

	public int stalls() {
		return this.stalls;
	}

	/**
	 * @return the worst gap of any choice, 0 without gaps
	 */
	public long maxGapNanos() {
		return this.gaps.maxNanos();
	}

	/**
	 * A nearest-rank percentile over the gaps of all choices.
	 * @param p the fraction in (0, 1]
	 * @return nanoseconds, 0 without gaps
	 */
	public long gapPercentileNanos(double p) {
		return this.gaps.percentileNanos(p);
	}

	/**
	 * Output tokens of one choice: its own usage count when the stream carried one per
	 * choice, the stream's usage when there is only one choice, else the choice's content
	 * events.
	 * @param choice the choice index
	 * @return the token count
	 */
	public long outputTokens(int choice) {
		int c = clockOf(choice);
		if (c >= this.choices) {
			return (this.choices <= 1 && this.streamTokens >= 0) ? this.streamTokens : 0;
		}
		if (this.choiceTokens[c] >= 0) {
			return this.choiceTokens[c];
		}
		return (this.choices == 1 && this.streamTokens >= 0) ? this.streamTokens : this.choiceEvents[c];
	}

	/**
	 * Time per output token of one choice: (its last content write - its first) / (its
	 * tokens - 1).
	 * @param choice the choice index
	 * @return seconds, or NaN with fewer than two tokens or content events
	 */
	public double timePerOutputTokenSeconds(int choice) {
		int c = clockOf(choice);
		int events = contentEvents(c);
		long tokens = outputTokens(c);
		if (tokens < 2 || events < 2) {
			return Double.NaN;
		}
		return (this.choiceLastWrite[c] - this.choiceFirstWrite[c]) / 1e9 / (tokens - 1);
	}

	/**
	 * The stream's p99 gap over its p50 gap, nearest-rank on its own gaps.
	 * @param minGaps gaps needed for a meaningful ratio
	 * @return the ratio, or NaN with fewer than {@code minGaps} gaps or a zero median
	 */
	public double jitterRatio(int minGaps) {
		if (this.gaps.count() < minGaps) {
			return Double.NaN;
		}
		long p50 = this.gaps.percentileNanos(0.50);
		return (p50 <= 0) ? Double.NaN : (double) this.gaps.percentileNanos(0.99) / p50;
	}

	/**
	 * Median gap so far over all choices (used by spike detection).
	 * @return nanoseconds, 0 with no gaps
	 */
	public long medianGapNanos() {
		return this.gaps.percentileNanos(0.50);
	}

	/**
	 * A value the median gap is never below, in constant time (see
	 * {@link GapRecord#lowerBoundNanos()}): a gap under a multiple of it is under that
	 * multiple of the median too.
	 * @return nanoseconds, 0 with no gaps
	 */
	public long medianGapLowerBoundNanos() {
		return this.gaps.lowerBoundNanos();
	}

	/** The clock of a choice index: indexes from MAX_CHOICES - 1 up share the last. */
	private static int clockOf(int choice) {
		return Math.min(Math.max(choice, 0), MAX_CHOICES - 1);
	}

	/** The clock slot of a choice index, growing the per-choice arrays on a new index. */
	private int slot(int choice) {
		int c = clockOf(choice);
		if (c >= this.choices) {
			if (c >= this.choiceEvents.length) {
				grow(Math.min(MAX_CHOICES, Math.max(c + 1, 2 * this.choiceEvents.length)));
			}
			this.choices = c + 1;
		}
		return c;
	}

	private void grow(int size) {
		int old = this.choiceEvents.length;
		this.choiceFirstWrite = Arrays.copyOf(this.choiceFirstWrite, size);
		this.choiceLastWrite = Arrays.copyOf(this.choiceLastWrite, size);
		this.choiceLastArrival = Arrays.copyOf(this.choiceLastArrival, size);
		this.choiceEvents = Arrays.copyOf(this.choiceEvents, size);
		this.choiceTokens = Arrays.copyOf(this.choiceTokens, size);
		Arrays.fill(this.choiceTokens, old, size, -1);
	}

}
