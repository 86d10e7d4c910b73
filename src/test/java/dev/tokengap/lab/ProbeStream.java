package dev.tokengap.lab;

import io.netty.buffer.ByteBuf;
import io.netty.util.ByteProcessor;

/**
 * One stream's events: parses {@code : sent=<nanos>} comment lines and blank lines (an
 * event's end) out of the body as it is delivered, within the read that brought it.
 */
final class ProbeStream implements ByteProcessor {

	final long[] delays;

	final int expected;

	private final long windowStart;

	private final long windowEnd;

	volatile ReadStamp stamp;

	int measured;

	long coalesced;

	long total;

	String error;

	private long sent = -1;

	private boolean lineEmpty = true;

	private boolean inComment;

	private boolean inValue;

	private long lastEventSeq = -1;

	private boolean lastCounted;

	ProbeStream(int expected, long windowStart, long windowEnd) {
		this.expected = expected;
		this.delays = new long[expected];
		this.windowStart = windowStart;
		this.windowEnd = windowEnd;
	}

	void read(ByteBuf buf) {
		buf.forEachByte(this);
	}

	@Override
	public boolean process(byte b) {
		if (b == '\n') {
			if (this.lineEmpty && this.sent >= 0) {
				event();
			}
			this.lineEmpty = true;
			this.inComment = false;
			this.inValue = false;
			return true;
		}
		if (this.lineEmpty && b == ':') {
			this.inComment = true;
			this.sent = -1;
		}
		else if (this.inComment && b == '=') {
			this.inValue = true;
			this.sent = 0;
		}
		else if (this.inValue && b >= '0' && b <= '9') {
			this.sent = this.sent * 10 + (b - '0');
		}
		this.lineEmpty = false;
		return true;
	}

	private void event() {
		ReadStamp read = this.stamp;
		long seq = read.seq;
		boolean inWindow = this.sent >= this.windowStart && this.sent < this.windowEnd;
		this.total++;
		if (seq == this.lastEventSeq) {
			this.coalesced += (inWindow) ? (this.lastCounted ? 1 : 2) : 0;
			this.lastCounted = true;
		}
		else {
			this.lastCounted = false;
		}
		this.lastEventSeq = seq;
		if (inWindow && this.measured < this.delays.length) {
			this.delays[this.measured++] = read.nanos - this.sent;
		}
		this.sent = -1;
	}

}
