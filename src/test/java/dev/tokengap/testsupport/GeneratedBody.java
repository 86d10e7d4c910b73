package dev.tokengap.testsupport;

import java.util.zip.CRC32;

import reactor.core.publisher.Flux;

/**
 * A large response body made on the fly, chunk by chunk, and never held whole: each chunk
 * carries its own index, so a lost, repeated or reordered chunk changes the checksum.
 *
 * @param size the body's length in bytes
 * @param chunkSize the length of each chunk (the last one may be shorter)
 */
public record GeneratedBody(long size, int chunkSize) {

	/** The chunks, each made when requested. */
	public Flux<byte[]> chunks() {
		long count = (this.size + this.chunkSize - 1) / this.chunkSize;
		return Flux.<byte[], Long>generate(() -> 0L, (index, sink) -> {
			sink.next(chunk(index));
			if (index + 1 == count) {
				sink.complete();
			}
			return index + 1;
		});
	}

	/** The CRC32 of the whole body, computed chunk by chunk. */
	public long checksum() {
		CRC32 crc = new CRC32();
		long count = (this.size + this.chunkSize - 1) / this.chunkSize;
		for (long i = 0; i < count; i++) {
			crc.update(chunk(i));
		}
		return crc.getValue();
	}

	private byte[] chunk(long index) {
		int length = (int) Math.min(this.chunkSize, this.size - index * this.chunkSize);
		byte[] bytes = new byte[length];
		for (int i = 0; i < length; i++) {
			bytes[i] = (byte) ('a' + (index + i) % 26);
		}
		for (int i = 0; i < Math.min(8, length); i++) {
			bytes[i] = (byte) (index >>> (56 - 8 * i));
		}
		return bytes;
	}

}
