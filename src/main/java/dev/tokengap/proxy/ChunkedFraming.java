package dev.tokengap.proxy;

import java.util.Arrays;

import io.netty.buffer.ByteBuf;

/**
 * Reads the chunked framing of an engine response body (RFC 9112, 7.1) in place, so that
 * the body's bytes can go to the client as the engine framed them instead of being
 * decoded into pieces and framed again.
 * <p>
 * For each buffer it tells which bytes are chunk data (for the event scanner), how far
 * the bytes may be forwarded, and where the body ends. Forwarding stops before the last
 * chunk ({@code 0} line, trailers, empty line): the client's own last chunk is written by
 * the server's codec when the response ends, which also readies it for the next response
 * on the connection. A buffer that ends inside a chunk-size line is forwarded up to that
 * line's start; the caller carries the line's bytes over to the next buffer, so a size
 * line is always judged whole (a lone {@code 0} could be the last chunk or the start of
 * {@code 0a}). Only framing bytes are looked at one by one: a chunk's data is skipped in
 * one step.
 *
 * <pre>
 * size line ─CRLF─▶ data (size bytes) ─CRLF─▶ size line ...
 *     │ size 0
 *     └─CRLF─▶ trailer lines ─empty line─▶ complete
 * </pre>
 */
final class ChunkedFraming {

	/** Longest chunk-size line (size and extensions) accepted, as Netty's decoder. */
	static final int MAX_SIZE_LINE = 4096;

	private static final int SIZE_START = 0;

	private static final int SIZE = 1;

	private static final int EXTENSION = 2;

	private static final int SIZE_LF = 3;

	private static final int DATA = 4;

	private static final int DATA_END = 5;

	private static final int DATA_LF = 6;

	private static final int TRAILER_START = 7;

	private static final int TRAILER = 8;

	private static final int TRAILER_LF = 9;

	private static final int END_LF = 10;

	private static final int COMPLETE = 11;

	private static final int MALFORMED = 12;

	private int state;

	/** The chunk size being read, then the data bytes of the chunk still to come. */
	private long size;

	private int sizeLineLength;

	/** Data ranges of the last buffer read: start and end index pairs. */
	private int[] ranges = new int[8];

	private int rangeCount;

	private int forwardEnd;

	/** Where the size line being read started, in the buffer being read. */
	private int lineStart;

	private int carryFrom;

	private int consumedEnd;

	private String problem;

	/** Starts a new body. */
	void reset() {
		this.state = SIZE_START;
		this.size = 0;
		this.sizeLineLength = 0;
		this.problem = null;
	}

	/**
	 * Reads a buffer's readable bytes, which must follow the previous buffer's (with a
	 * carried size line first). Leaves the buffer's indexes alone.
	 * @param buf the next bytes of the body
	 */
	void read(ByteBuf buf) {
		int end = buf.writerIndex();
		this.rangeCount = 0;
		this.forwardEnd = -1;
		this.carryFrom = -1;
		this.consumedEnd = -1;
		this.lineStart = buf.readerIndex();
		int i = this.lineStart;
		while (i < end && this.state < COMPLETE) {
			if (this.state == DATA) {
				int n = (int) Math.min(this.size, end - i);
				addRange(i, i + n);
				i += n;
				this.size -= n;
				if (this.size == 0) {
					this.state = DATA_END;
				}
				continue;
			}
			if (this.state == SIZE_START) {
				this.lineStart = i;
			}
			step(buf.getByte(i));
			i++;
		}
		finish(buf, i);
	}

	private void finish(ByteBuf buf, int stop) {
		int end = buf.writerIndex();
		if (this.state == COMPLETE) {
			this.consumedEnd = stop;
		}
		if (this.forwardEnd < 0) {
			if (this.state == MALFORMED) {
				this.forwardEnd = stop - 1;
			}
			else if (this.state >= TRAILER_START) {
				// the last chunk began in an earlier buffer: nothing of this one is body
				this.forwardEnd = buf.readerIndex();
			}
			else if (this.state >= SIZE && this.state <= SIZE_LF) {
				// read again, whole, with the next buffer
				this.forwardEnd = this.lineStart;
				this.carryFrom = this.lineStart;
				this.state = SIZE_START;
				this.size = 0;
				this.sizeLineLength = 0;
			}
			else {
				this.forwardEnd = end;
			}
		}
	}

	private void step(byte b) {
		switch (this.state) {
			case SIZE_START, SIZE -> sizeByte(b);
			case EXTENSION -> {
				if (b == '\r') {
					this.state = SIZE_LF;
				}
				else if (b == '\n') {
					sizeLineEnd();
				}
				else {
					countSizeLine();
				}
			}
			case SIZE_LF -> expectLf(b, true);
			case DATA_END -> {
				if (b == '\r') {
					this.state = DATA_LF;
				}
				else if (b == '\n') {
					this.state = SIZE_START;
				}
				else {
					malformed("chunk data is not followed by CRLF");
				}
			}
			case DATA_LF -> expectLf(b, false);
			case TRAILER_START -> {
				if (b == '\r') {
					this.state = END_LF;
				}
				else if (b == '\n') {
					this.state = COMPLETE;
				}
				else {
					this.state = TRAILER;
				}
			}
			case TRAILER -> {
				if (b == '\r') {
					this.state = TRAILER_LF;
				}
				else if (b == '\n') {
					this.state = TRAILER_START;
				}
			}
			case TRAILER_LF -> {
				if (b != '\n') {
					malformed("a trailer line's CR is not followed by LF");
				}
				else {
					this.state = TRAILER_START;
				}
			}
			case END_LF -> {
				if (b != '\n') {
					malformed("the last chunk's empty line is not CRLF");
				}
				else {
					this.state = COMPLETE;
				}
			}
			default -> throw new IllegalStateException("state " + this.state);
		}
	}

	private void sizeByte(byte b) {
		int digit = Character.digit(b, 16);
		if (digit >= 0) {
			if (this.size > (Integer.MAX_VALUE >> 4)) {
				malformed("a chunk size over 2 GiB");
				return;
			}
			this.size = (this.size << 4) | digit;
			this.state = SIZE;
			countSizeLine();
			return;
		}
		if (this.state == SIZE_START) {
			malformed("a chunk-size line does not start with a hex digit");
		}
		else if (b == ';' || b == ' ' || b == '\t') {
			this.state = EXTENSION;
			countSizeLine();
		}
		else if (b == '\r') {
			this.state = SIZE_LF;
		}
		else if (b == '\n') {
			sizeLineEnd();
		}
		else {
			malformed("a chunk size has a byte that is not a hex digit");
		}
	}

	private void countSizeLine() {
		if (++this.sizeLineLength > MAX_SIZE_LINE) {
			malformed("a chunk-size line longer than " + MAX_SIZE_LINE + " bytes");
		}
	}

	private void expectLf(byte b, boolean sizeLine) {
		if (b != '\n') {
			malformed(sizeLine ? "a chunk-size line's CR is not followed by LF" : "chunk data is not followed by CRLF");
		}
		else if (sizeLine) {
			sizeLineEnd();
		}
		else {
			this.state = SIZE_START;
		}
	}

	/** A size line ends: data follows, or, for size 0, the last chunk's trailers. */
	private void sizeLineEnd() {
		this.sizeLineLength = 0;
		if (this.size > 0) {
			this.state = DATA;
			return;
		}
		this.forwardEnd = this.lineStart;
		this.state = TRAILER_START;
	}

	private void malformed(String why) {
		this.state = MALFORMED;
		this.problem = why;
	}

	private void addRange(int from, int to) {
		if (to <= from) {
			return;
		}
		if (2 * this.rangeCount + 2 > this.ranges.length) {
			this.ranges = Arrays.copyOf(this.ranges, 2 * this.ranges.length);
		}
		this.ranges[2 * this.rangeCount] = from;
		this.ranges[2 * this.rangeCount + 1] = to;
		this.rangeCount++;
	}

	/**
	 * @return how many data ranges the last buffer had
	 */
	int rangeCount() {
		return this.rangeCount;
	}

	/**
	 * @param i a range, below {@link #rangeCount()}
	 * @return the index of its first data byte
	 */
	int rangeStart(int i) {
		return this.ranges[2 * i];
	}

	/**
	 * @param i a range, below {@link #rangeCount()}
	 * @return the index after its last data byte
	 */
	int rangeEnd(int i) {
		return this.ranges[2 * i + 1];
	}

	/**
	 * @return the index up to which the last buffer's bytes go to the client
	 */
	int forwardEnd() {
		return this.forwardEnd;
	}

	/**
	 * @return the index from which the last buffer's bytes are an unfinished chunk-size
	 * line to carry over to the next buffer, or -1
	 */
	int carryFrom() {
		return this.carryFrom;
	}

	/**
	 * @return whether the body is complete (the last chunk and its trailers were read)
	 */
	boolean complete() {
		return this.state == COMPLETE;
	}

	/**
	 * @return the index after the body's last byte, when {@link #complete()} turned true
	 * in the last buffer
	 */
	int consumedEnd() {
		return this.consumedEnd;
	}

	/**
	 * @return what is wrong with the framing, or null while it is valid
	 */
	String problem() {
		return this.problem;
	}

}
