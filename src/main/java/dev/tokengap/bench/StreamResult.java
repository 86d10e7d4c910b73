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

	private final long startNanos;

	private long readNanos;

	private long firstContentNanos = -1;

	private long lastContentNanos = -1;

	private long endNanos = -1;

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
		SseEventKind kind = this.scanner.accept(value);
		if (kind != null) {
			onEvent(kind);
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
		if (this.lastContentNanos < 0) {
			this.firstContentNanos = nanos;
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
		int rank = (int) Math.ceil(q * sorted.length);
		return sorted[Math.max(0, Math.min(sorted.length, rank) - 1)];
	}

}
