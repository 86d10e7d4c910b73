package dev.tokengap.backend;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import io.netty.buffer.ByteBuf;

/**
 * A scrape's body, copied out of Netty's buffers as they arrive into one array that grows
 * up to a hard cap, so that a runaway {@code /metrics} costs at most the cap.
 */
final class ScrapeBody {

	private static final int INITIAL_CAPACITY = 64 * 1024;

	private final int maxBytes;

	private byte[] bytes;

	private int size;

	ScrapeBody(int maxBytes) {
		this.maxBytes = maxBytes;
		this.bytes = new byte[Math.min(INITIAL_CAPACITY, maxBytes)];
	}

	void reset() {
		this.size = 0;
	}

	/**
	 * Copies the buffer's readable bytes without consuming or releasing it (Reactor Netty
	 * releases inbound buffers after each {@code onNext}).
	 * @return false, copying nothing, when the body would exceed the cap
	 */
	boolean append(ByteBuf buffer) {
		int length = buffer.readableBytes();
		if (length > this.maxBytes - this.size) {
			return false;
		}
		if (this.size + length > this.bytes.length) {
			int grown = (int) Math.min(Math.max(2L * this.bytes.length, this.size + length), this.maxBytes);
			this.bytes = Arrays.copyOf(this.bytes, grown);
		}
		buffer.getBytes(buffer.readerIndex(), this.bytes, this.size, length);
		this.size += length;
		return true;
	}

	String text() {
		return new String(this.bytes, 0, this.size, StandardCharsets.UTF_8);
	}

	int capacity() {
		return this.bytes.length;
	}

}
