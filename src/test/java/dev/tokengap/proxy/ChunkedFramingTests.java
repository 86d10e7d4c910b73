package dev.tokengap.proxy;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The chunked framing reader over bodies cut into reads at every place: what it forwards
 * is the engine's framing up to the last chunk, byte for byte, its data ranges are the
 * decoded body, and it knows where the body ends.
 */
class ChunkedFramingTests {

	private static final String EVENTS = "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\n";

	/**
	 * vLLM's shape (h11): one chunk per event, hex sizes, CRLF, and an empty last chunk.
	 */
	private static final String BODY = chunk(EVENTS) + chunk("data: [DONE]\n\n") + "0\r\n\r\n";

	@Test
	void forwardsTheFramingUpToTheLastChunkAndReadsTheDataWhereverTheReadsAreCut() {
		String body = chunk(EVENTS) + "1a;name=value\r\n" + "x".repeat(26) + "\r\n" + chunk("data: [DONE]\n\n")
				+ "0\r\nx-trailer: 1\r\n\r\n";
		int lastChunk = body.indexOf("0\r\nx-trailer");
		String data = EVENTS + "x".repeat(26) + "data: [DONE]\n\n";
		for (int cut = 1; cut < body.length(); cut++) {
			for (int cut2 = cut + 1; cut2 <= body.length(); cut2 += 7) {
				Result result = read(body, cut, cut2);
				assertThat(result.forwarded).as("cuts %d, %d", cut, cut2).isEqualTo(body.substring(0, lastChunk));
				assertThat(result.data).as("cuts %d, %d", cut, cut2).isEqualTo(data);
				assertThat(result.complete).as("cuts %d, %d", cut, cut2).isTrue();
				assertThat(result.consumedEnd).isEqualTo(body.length());
				assertThat(result.problem).isNull();
			}
		}
	}

	@Test
	void aReadThatEndsInASizeLineForwardsUpToTheLineAndCarriesItOver() {
		ChunkedFraming framing = new ChunkedFraming();
		framing.reset();
		ByteBuf first = bytes(chunk(EVENTS) + "1");
		framing.read(first);
		assertThat(framing.forwardEnd()).isEqualTo(chunk(EVENTS).length());
		assertThat(framing.carryFrom()).isEqualTo(chunk(EVENTS).length());
		assertThat(framing.complete()).isFalse();
	}

	@Test
	void aLoneZeroAtTheEndOfAReadIsNotTakenForTheLastChunk() {
		String body = chunk(EVENTS) + "0a\r\n0123456789\r\n0\r\n\r\n";
		Result result = read(body, chunk(EVENTS).length() + 1, body.length());
		assertThat(result.forwarded).isEqualTo(chunk(EVENTS) + "0a\r\n0123456789\r\n");
		assertThat(result.data).isEqualTo(EVENTS + "0123456789");
		assertThat(result.complete).isTrue();
	}

	@Test
	void acceptsBareLineFeedsAsNettysDecoderDoes() {
		String body = "5\nhello\n0\n\n";
		Result result = read(body, 3, body.length());
		assertThat(result.data).isEqualTo("hello");
		assertThat(result.forwarded).isEqualTo("5\nhello\n");
		assertThat(result.complete).isTrue();
	}

	@Test
	void tellsWhereTheBodyEndsWhenBytesFollowIt() {
		ChunkedFraming framing = new ChunkedFraming();
		framing.reset();
		ByteBuf buf = bytes(BODY + "HTTP/1.1 200 OK\r\n");
		framing.read(buf);
		assertThat(framing.complete()).isTrue();
		assertThat(framing.consumedEnd()).isEqualTo(BODY.length());
		assertThat(framing.forwardEnd()).isEqualTo(BODY.indexOf("0\r\n\r\n"));
	}

	@Test
	void aLastChunkAloneInItsReadForwardsNothing() {
		String body = chunk(EVENTS) + "0\r\n\r\n";
		Result result = read(body, chunk(EVENTS).length(), body.length());
		assertThat(result.forwarded).isEqualTo(chunk(EVENTS));
		assertThat(result.complete).isTrue();
	}

	@Test
	void namesWhatIsWrongWithBrokenFraming() {
		assertThat(problem("zz\r\nabc")).isEqualTo("a chunk-size line does not start with a hex digit");
		assertThat(problem("3\r\nabcX\r\n")).isEqualTo("chunk data is not followed by CRLF");
		assertThat(problem("3x\r\nabc")).isEqualTo("a chunk size has a byte that is not a hex digit");
		assertThat(problem("3\rabc")).isEqualTo("a chunk-size line's CR is not followed by LF");
		assertThat(problem("fffffffff\r\n")).isEqualTo("a chunk size over 2 GiB");
		assertThat(problem("1;" + "e".repeat(ChunkedFraming.MAX_SIZE_LINE) + "\r\n"))
			.isEqualTo("a chunk-size line longer than 4096 bytes");
		assertThat(problem("0\r\nx\rY")).isEqualTo("a trailer line's CR is not followed by LF");
		assertThat(problem("0\r\n\rY")).isEqualTo("the last chunk's empty line is not CRLF");
	}

	@Test
	void forwardsTheBytesBeforeBrokenFraming() {
		ChunkedFraming framing = new ChunkedFraming();
		framing.reset();
		framing.read(bytes(chunk(EVENTS) + "zz"));
		assertThat(framing.problem()).isNotNull();
		assertThat(framing.forwardEnd()).isEqualTo(chunk(EVENTS).length());
	}

	private static String problem(String body) {
		ChunkedFraming framing = new ChunkedFraming();
		framing.reset();
		framing.read(bytes(body));
		return framing.problem();
	}

	/**
	 * Reads body in three reads cut at cut and cut2, carrying size lines over as the
	 * exchange does.
	 */
	private static Result read(String body, int cut, int cut2) {
		ChunkedFraming framing = new ChunkedFraming();
		framing.reset();
		ByteArrayOutputStream forwarded = new ByteArrayOutputStream();
		ByteArrayOutputStream data = new ByteArrayOutputStream();
		byte[] carry = new byte[0];
		Result result = new Result();
		int[] cuts = { 0, cut, cut2, body.length() };
		int offset = 0;
		for (int r = 0; r < 3; r++) {
			if (cuts[r + 1] <= cuts[r] && carry.length == 0) {
				continue;
			}
			String piece = body.substring(cuts[r], cuts[r + 1]);
			ByteBuf buf = Unpooled.buffer();
			buf.writeBytes(carry).writeBytes(piece.getBytes(StandardCharsets.ISO_8859_1));
			int base = offset - carry.length;
			framing.read(buf);
			for (int i = 0; i < framing.rangeCount(); i++) {
				data.write(bytesOf(buf, framing.rangeStart(i), framing.rangeEnd(i)), 0,
						framing.rangeEnd(i) - framing.rangeStart(i));
			}
			byte[] out = bytesOf(buf, buf.readerIndex(), framing.forwardEnd());
			forwarded.write(out, 0, out.length);
			carry = (framing.carryFrom() >= 0) ? bytesOf(buf, framing.carryFrom(), buf.writerIndex()) : new byte[0];
			if (framing.complete()) {
				result.complete = true;
				result.consumedEnd = base + framing.consumedEnd();
			}
			if (framing.problem() != null) {
				result.problem = framing.problem();
			}
			offset = cuts[r + 1];
		}
		result.forwarded = forwarded.toString(StandardCharsets.ISO_8859_1);
		result.data = data.toString(StandardCharsets.ISO_8859_1);
		return result;
	}

	private static byte[] bytesOf(ByteBuf buf, int from, int to) {
		byte[] out = new byte[to - from];
		buf.getBytes(from, out);
		return out;
	}

	private static ByteBuf bytes(String text) {
		return Unpooled.copiedBuffer(text, StandardCharsets.ISO_8859_1);
	}

	private static String chunk(String data) {
		return Integer.toHexString(data.length()) + "\r\n" + data + "\r\n";
	}

	private static final class Result {

		String forwarded;

		String data;

		boolean complete;

		int consumedEnd = -1;

		String problem;

	}

}
