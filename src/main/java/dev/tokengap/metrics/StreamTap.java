package dev.tokengap.metrics;

import java.nio.ByteBuffer;
import java.util.Arrays;

import dev.tokengap.sse.SseEventKind;
import dev.tokengap.sse.SseEventScanner;
import dev.tokengap.timing.ContentWrite;
import dev.tokengap.timing.EngineReport;
import dev.tokengap.timing.ResponseTap;

/**
 * What tokengap measures of one response, behind the transport's {@link ResponseTap}:
 * scans the engine's bytes for SSE events as they arrive, notes the events of the bytes
 * in flight, and records them on the exchange's {@link ExchangeRecorder} at the time
 * their write to the client completed; the relay's ending becomes the stream's outcome.
 * <p>
 * Only a live stream is scanned; any other response is timed by its writes alone (first
 * byte, end). The pending events are primitive arrays that grow only when one write
 * carries more events than any before it, so an event costs no allocation.
 */
public final class StreamTap implements ResponseTap {

	private final ExchangeRecorder recorder;

	private final SseEventScanner scanner;

	/**
	 * The times of the bytes in flight, told to the recorder for each of their content
	 * events.
	 */
	private final ContentWrite event = new ContentWrite();

	/** Choice index of each content event in the bytes in flight, in order. */
	private int[] pendingChoices = new int[4];

	private int pendingContent;

	/** Output token counts in the bytes in flight: choice (-1 = stream) and count. */
	private int[] tokenChoices = new int[2];

	private long[] tokenCounts = new long[2];

	private int pendingTokens;

	/** The engine's report from an event in flight, until its bytes are written. */
	private EngineReport pendingReport;

	/** Whether the stream's engine report was taken: only the first counts. */
	private boolean engineReportTaken;

	private boolean sawEnd;

	private boolean sawFailure;

	/** Socket wait of the writes since the last content event (bytes of no event). */
	private long earlierWaitNanos;

	private long lastWriteNanos = -1;

	private boolean pending;

	private boolean ended;

	/**
	 * Creates the tap of one response.
	 * @param recorder the exchange's recorder
	 * @param live whether the response is a live stream whose events are timed
	 */
	public StreamTap(ExchangeRecorder recorder, boolean live) {
		this.recorder = recorder;
		this.scanner = live ? new SseEventScanner() : null;
	}

	@Override
	public boolean readsBytes() {
		return this.scanner != null;
	}

	@Override
	public void received(ByteBuffer bytes, long arrivalNanos) {
		if (this.ended) {
			return;
		}
		if (!this.pending) {
			this.pending = true;
			this.event.setArrivalNanos(arrivalNanos);
			this.event.setWriteStartNanos(arrivalNanos);
		}
		else {
			// bytes joined a write not yet done: its events arrived with these
			this.event.setArrivalNanos(arrivalNanos);
		}
		if (this.scanner != null) {
			for (int i = bytes.position(), end = bytes.limit(); i < end;) {
				i = this.scanner.scan(bytes, i, end);
				SseEventKind kind = this.scanner.completed();
				if (kind != null) {
					completed(kind);
				}
			}
		}
	}

	@Override
	public void writeStarted(long nanos) {
		if (!this.ended) {
			this.event.setWriteStartNanos(nanos);
		}
	}

	@Override
	public void written(long nanos) {
		if (this.ended || !this.pending) {
			return;
		}
		this.pending = false;
		this.lastWriteNanos = nanos;
		this.recorder.bodyWritten(nanos);
		if (this.pendingContent == 0) {
			this.earlierWaitNanos += Math.max(0, nanos - this.event.writeStartNanos());
		}
		this.event.setWriteNanos(nanos);
		for (int i = 0; i < this.pendingContent; i++) {
			this.event.setEarlierWaitNanos(this.earlierWaitNanos);
			this.recorder.contentWritten(this.pendingChoices[i], this.event);
			this.earlierWaitNanos = 0;
		}
		for (int i = 0; i < this.pendingTokens; i++) {
			this.recorder.outputTokens(this.tokenChoices[i], this.tokenCounts[i]);
		}
		if (this.pendingReport != null) {
			this.recorder.engineReported(this.pendingReport);
			this.pendingReport = null;
		}
		this.pendingContent = 0;
		this.pendingTokens = 0;
	}

	@Override
	public void ended(Ending ending, long nanos) {
		if (this.ended) {
			return;
		}
		this.ended = true;
		this.recorder.outcome(outcome(ending, nanos));
	}

	private StreamOutcome outcome(Ending ending, long nanos) {
		return switch (ending) {
			case ENGINE_COMPLETED -> completed(nanos);
			case ENGINE_TIMED_OUT -> StreamOutcome.UPSTREAM_TIMEOUT;
			case ENGINE_FAILED, WRITE_FAILED -> StreamOutcome.UPSTREAM_ERROR;
			case CLIENT_GONE -> StreamOutcome.CLIENT_CANCELLED;
		};
	}

	/**
	 * The engine's body ended: complete when every byte reached the client; bytes still
	 * in flight never did, so the response is not whole.
	 */
	private StreamOutcome completed(long nanos) {
		if (this.pending) {
			return StreamOutcome.CLIENT_CANCELLED;
		}
		this.recorder.completed((this.lastWriteNanos >= 0) ? this.lastWriteNanos : nanos);
		return StreamOutcome.ofBody(this.sawFailure, this.sawEnd, this.recorder.timer().contentEvents());
	}

	private void completed(SseEventKind kind) {
		switch (kind) {
			case CONTENT -> pendContent(this.scanner.contentChoices());
			case DONE -> this.sawEnd = true;
			case ERROR -> this.sawFailure = true;
			default -> {
				// not timed
			}
		}
		long tokens = this.scanner.outputTokens();
		if (tokens >= 0) {
			pendTokens(this.scanner.tokensChoice(), tokens);
		}
		if (this.scanner.engineMetrics() && !this.engineReportTaken) {
			pendReport();
		}
	}

	/** The stream's one allocation for its engine report, read before the next event. */
	private void pendReport() {
		this.engineReportTaken = true;
		this.pendingReport = new EngineReport(this.scanner.engineQueueMs(), this.scanner.engineFirstTokenMs(),
				this.scanner.engineGenerationMs(), this.scanner.engineMeanItlMs(), this.scanner.enginePreemptions());
	}

	private void pendContent(long choices) {
		long remaining = choices;
		while (remaining != 0) {
			int choice = Long.numberOfTrailingZeros(remaining);
			remaining &= remaining - 1;
			if (this.pendingContent == this.pendingChoices.length) {
				this.pendingChoices = Arrays.copyOf(this.pendingChoices, 2 * this.pendingContent);
			}
			this.pendingChoices[this.pendingContent++] = choice;
		}
	}

	private void pendTokens(int choice, long tokens) {
		if (this.pendingTokens == this.tokenChoices.length) {
			this.tokenChoices = Arrays.copyOf(this.tokenChoices, 2 * this.pendingTokens);
			this.tokenCounts = Arrays.copyOf(this.tokenCounts, 2 * this.pendingTokens);
		}
		this.tokenChoices[this.pendingTokens] = choice;
		this.tokenCounts[this.pendingTokens++] = tokens;
	}

}
