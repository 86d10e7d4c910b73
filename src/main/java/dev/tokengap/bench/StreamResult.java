package dev.tokengap.bench;

import java.util.Arrays;

import io.netty.buffer.ByteBuf;
import io.netty.util.ByteProcessor;

import dev.tokengap.metrics.StreamOutcome;
import dev.tokengap.sse.SseEventKind;
import dev.tokengap.sse.SseEventScanner;

/**
 * What one streamed request saw: when it was sent, when each content event arrived (one
 * clock read per read from the socket, shared by the events that read completed) and how
 * it ended. A body that ends cleanly is judged by the proxy's own rule
 * ({@link StreamOutcome#ofBody}), so the bench's successful requests are exactly the
 * streams tokengap counts {@code completed}. Filled by one connection's event loop, read
 * once the request is over.
 */
final class StreamResult implements ByteProcessor {

	final int promptTokens;

	final int maxTokens;

	private final SseEventScanner scanner = new SseEventScanner();

	private final ReasoningMatcher reasoning = new ReasoningMatcher();

	private final long startNanos;

	private long readNanos;

	private long firstContentNanos = -1;

	private long lastContentNanos = -1;

	private long firstAnswerNanos = -1;

	private boolean reasonedFirst;

	private long endNanos = -1;

	private long finishedNanos = -1;

	private long[] gaps;

	private int gapCount;

	private int contentEvents;

	private long completionTokens = -1;

	private boolean sawDone;

	private boolean sawFailure;

	private String error;

	StreamResult(int promptTokens, int maxTokens, long startNanos) {
		this.promptTokens = promptTokens;
		this.maxTokens = maxTokens;
		this.startNanos = startNanos;
		this.gaps = new long[Math.max(16, maxTokens)];
	}

	/** One read's bytes, arrived at {@code nanos}. */
	void onBytes(ByteBuf buf, long nanos) {
		this.readNanos = nanos;
		buf.forEachByte(this);
	}

	@Override
	public boolean process(byte value) {
		this.reasoning.accept(value);
		SseEventKind kind = this.scanner.accept(value);
		if (kind != null) {
			onEvent(kind);
			this.reasoning.reset();
		}
		return true;
	}

	private void onEvent(SseEventKind kind) {
		long tokens = this.scanner.outputTokens();
		if (tokens >= 0) {
			this.completionTokens = tokens;
		}
		switch (kind) {
			case CONTENT -> onContent(this.readNanos);
			case DONE -> {
				this.sawDone = true;
				this.endNanos = this.readNanos;
			}
			case ERROR -> this.sawFailure = true;
			default -> {
			}
		}
	}

	private void onContent(long nanos) {
		this.contentEvents++;
		boolean answer = !this.reasoning.matched();
		if (answer && this.firstAnswerNanos < 0) {
			this.firstAnswerNanos = nanos;
		}
		if (this.lastContentNanos < 0) {
			this.firstContentNanos = nanos;
			this.reasonedFirst = !answer;
		}
		else {
			if (this.gapCount == this.gaps.length) {
				this.gaps = Arrays.copyOf(this.gaps, this.gapCount * 2);
			}
			this.gaps[this.gapCount++] = nanos - this.lastContentNanos;
		}
		this.lastContentNanos = nanos;
	}

	/** The response body ended (the last read was the last byte). */
	void complete() {
		if (this.endNanos < 0) {
			this.endNanos = this.readNanos;
		}
		if (StreamOutcome.ofBody(this.sawFailure, this.sawDone, this.contentEvents) != StreamOutcome.COMPLETED) {
			fail(engineError());
		}
	}

	private String engineError() {
		if (this.sawFailure) {
			return "in-band error event";
		}
		if (!this.sawDone) {
			return "stream ended without its end marker ([DONE], response.completed, message_stop)";
		}
		return "no content event";
	}

	/** The load run saw this request end, successful or not. */
	void finished(long nanos) {
		this.finishedNanos = nanos;
	}

	long startNanos() {
		return this.startNanos;
	}

	/** From the send to the load run seeing the end. */
	long inFlightNanos() {
		return (this.finishedNanos >= 0) ? this.finishedNanos - this.startNanos : 0;
	}

	void fail(String reason) {
		if (this.error == null) {
			this.error = reason;
		}
	}

	boolean ok() {
		return this.error == null && this.endNanos >= 0;
	}

	String error() {
		return this.error;
	}

	double ttftMs() {
		return (this.firstContentNanos - this.startNanos) / 1e6;
	}

	double e2elMs() {
		return (this.endNanos - this.startNanos) / 1e6;
	}

	/**
	 * Tokens: the usage the stream carried ({@code usage.completion_tokens}, or
	 * {@code response.usage.output_tokens}), else content events.
	 */
	long outputTokens() {
		return (this.completionTokens >= 0) ? this.completionTokens : this.contentEvents;
	}

	/** (e2e - ttft) / (tokens - 1), NaN with one token (vLLM's TPOT). */
	double tpotMs() {
		long tokens = outputTokens();
		return (tokens > 1) ? (e2elMs() - ttftMs()) / (tokens - 1) : Double.NaN;
	}

	int gapCount() {
		return this.gapCount;
	}

	long gapNanos(int i) {
		return this.gaps[i];
	}

	long maxGapNanos() {
		long max = 0;
		for (int i = 0; i < this.gapCount; i++) {
			max = Math.max(max, this.gaps[i]);
		}
		return max;
	}

	/**
	 * Request sent to the first answer event after the stream's reasoning, NaN when the
	 * stream did not open with reasoning or never answered.
	 */
	double firstAnswerMs() {
		return (this.reasonedFirst && this.firstAnswerNanos >= 0) ? (this.firstAnswerNanos - this.startNanos) / 1e6
				: Double.NaN;
	}

	/** The stream's own p99 gap, nearest rank (tokengap_stream_p99_gap_seconds). */
	long p99GapNanos() {
		long[] sorted = Arrays.copyOf(this.gaps, this.gapCount);
		Arrays.sort(sorted);
		return (sorted.length == 0) ? 0 : nearestRank(sorted, 0.99);
	}

	/**
	 * Whether this stream's gap {@code i} is a spike as tokengap's spike detector decides
	 * it: at least {@code floorNanos}, and, once five gaps came before it, at least
	 * {@code factor} times the nearest-rank median of those earlier gaps.
	 * @return the spike flags, one per gap
	 */
	boolean[] spikes(long floorNanos, double factor) {
		boolean[] spikes = new boolean[this.gapCount];
		long[] earlier = new long[this.gapCount];
		for (int i = 0; i < this.gapCount; i++) {
			long gap = this.gaps[i];
			long threshold = floorNanos;
			if (i >= 5) {
				threshold = Math.max(threshold, (long) (factor * nearestRank(earlier, i, 0.50)));
			}
			spikes[i] = gap >= threshold;
			insertSorted(earlier, i, gap);
		}
		return spikes;
	}

	/**
	 * Which third of the stream's content events gap {@code i} ends at: 0 (head), 1
	 * (middle) or 2 (tail).
	 */
	int third(int i) {
		return Math.min(2, (int) ((i + 1) * 3L / this.contentEvents));
	}

	private static void insertSorted(long[] sorted, int count, long value) {
		int at = Arrays.binarySearch(sorted, 0, count, value);
		at = (at < 0) ? -at - 1 : at;
		System.arraycopy(sorted, at, sorted, at + 1, count - at);
		sorted[at] = value;
	}

	/**
	 * p99 gap / p50 gap, nearest rank on this stream's own gaps (as tokengap computes
	 * it).
	 */
	double jitterRatio() {
		long[] sorted = Arrays.copyOf(this.gaps, this.gapCount);
		Arrays.sort(sorted);
		long p50 = nearestRank(sorted, 0.50);
		return (p50 <= 0) ? Double.NaN : (double) nearestRank(sorted, 0.99) / p50;
	}

	private static long nearestRank(long[] sorted, double q) {
		return nearestRank(sorted, sorted.length, q);
	}

	private static long nearestRank(long[] sorted, int count, double q) {
		int rank = (int) Math.ceil(q * count);
		return sorted[Math.max(0, Math.min(count, rank) - 1)];
	}

}
