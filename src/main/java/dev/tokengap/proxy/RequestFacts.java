package dev.tokengap.proxy;

import java.nio.charset.StandardCharsets;

import io.netty.buffer.ByteBuf;
import io.netty.util.ByteProcessor;

/**
 * What tokengap needs to know of a request body: the model and whether a stream was asked
 * for. Read in place from the bytes as received (or, for a form, from its small fields);
 * the bytes themselves go upstream unchanged.
 * <p>
 * A JSON body is read by a scanner that looks only at the root object's keys: every other
 * value (the {@code messages} array, a base64 image, a long prompt) is skipped by
 * searching for the next quote or bracket, without tokenizing, copying or allocating. A
 * body that is not well-formed JSON as far as the scan goes yields {@link #NONE}: it is
 * forwarded anyway and the engine answers it.
 *
 * @param model the top-level {@code model}, or null when absent or not a string
 * @param stream the top-level {@code stream}
 * @param includeUsage {@code stream_options.include_usage}
 */
record RequestFacts(String model, boolean stream, boolean includeUsage) {

	static final RequestFacts NONE = new RequestFacts(null, false, false);

	/**
	 * Nesting deeper than this is no request a client sends: the body yields
	 * {@link #NONE}.
	 */
	private static final int MAX_DEPTH = 512;

	private static final byte[] MODEL = bytes("model");

	private static final byte[] STREAM = bytes("stream");

	private static final byte[] STREAM_OPTIONS = bytes("stream_options");

	private static final byte[] INCLUDE_USAGE = bytes("include_usage");

	private static final byte[] TRUE = bytes("true");

	/** Stops at the end of a string's run of plain bytes: a quote or a backslash. */
	private static final ByteProcessor STRING_RUN = (b) -> b != '"' && b != '\\';

	/** Stops at a byte that can change the nesting inside a skipped container. */
	private static final ByteProcessor CONTAINER_RUN = (b) -> b != '"' && b != '{' && b != '}' && b != '[' && b != ']';

	/**
	 * Reads the facts from a JSON or {@code multipart/form-data} body (the audio
	 * endpoints send {@code model} and {@code stream} as form fields); any other body
	 * yields {@link #NONE} (it is forwarded anyway and the engine answers it).
	 * @param body the request body (not consumed)
	 * @param contentType the request's {@code Content-Type}, or null
	 * @return the facts
	 */
	static RequestFacts of(ByteBuf body, String contentType) {
		if (!body.isReadable()) {
			return NONE;
		}
		String boundary = MultipartFields.boundary(contentType);
		if (boundary != null) {
			MultipartFields fields = MultipartFields.read(body, boundary);
			return new RequestFacts(fields.value("model"), "true".equalsIgnoreCase(fields.value("stream")),
					"true".equalsIgnoreCase(fields.value("stream_include_usage")));
		}
		return of(body);
	}

	/**
	 * Reads the facts from a JSON body; a body that is not a JSON object yields
	 * {@link #NONE}.
	 * @param body the request body (not consumed)
	 * @return the facts
	 */
	static RequestFacts of(ByteBuf body) {
		if (!body.isReadable()) {
			return NONE;
		}
		try {
			return new Scan(body).root();
		}
		catch (Malformed ex) {
			return NONE;
		}
	}

	private static byte[] bytes(String ascii) {
		return ascii.getBytes(StandardCharsets.US_ASCII);
	}

	/** The scan met something that is not JSON: the body yields {@link #NONE}. */
	private static final class Malformed extends RuntimeException {

		private static final Malformed INSTANCE = new Malformed();

		private Malformed() {
			super(null, null, false, false);
		}

	}

	/** One pass over one body, from its reader index to its writer index. */
	private static final class Scan {

		private final ByteBuf buf;

		private final int end;

		private int at;

		Scan(ByteBuf buf) {
			this.buf = buf;
			this.at = buf.readerIndex();
			this.end = buf.writerIndex();
		}

		RequestFacts root() {
			if (next() != '{') {
				return NONE;
			}
			String model = null;
			boolean stream = false;
			boolean includeUsage = false;
			this.at++;
			if (next() == '}') {
				return NONE;
			}
			while (true) {
				int keyStart = this.at + 1;
				int keyEnd = string();
				colon();
				if (is(keyStart, keyEnd, MODEL)) {
					model = (peek() == '"') ? text() : null;
					if (model == null) {
						skipValue();
					}
				}
				else if (is(keyStart, keyEnd, STREAM)) {
					stream = literalTrue();
				}
				else if (is(keyStart, keyEnd, STREAM_OPTIONS)) {
					includeUsage = streamOptions();
				}
				else {
					skipValue();
				}
				if (!more('}')) {
					return new RequestFacts(model, stream, includeUsage);
				}
			}
		}

		/**
		 * {@code stream_options}: an object whose {@code include_usage} is {@code true}.
		 */
		private boolean streamOptions() {
			if (next() != '{') {
				skipValue();
				return false;
			}
			this.at++;
			boolean include = false;
			if (next() == '}') {
				this.at++;
				return false;
			}
			while (true) {
				int keyStart = this.at + 1;
				int keyEnd = string();
				colon();
				if (is(keyStart, keyEnd, INCLUDE_USAGE)) {
					include = literalTrue();
				}
				else {
					skipValue();
				}
				if (!more('}')) {
					return include;
				}
			}
		}

		/**
		 * After a member: true at a comma (skipped), false at the closing byte (skipped).
		 */
		private boolean more(char close) {
			int b = next();
			this.at++;
			if (b == ',') {
				next();
				return true;
			}
			if (b == close) {
				return false;
			}
			throw Malformed.INSTANCE;
		}

		private void colon() {
			if (next() != ':') {
				throw Malformed.INSTANCE;
			}
			this.at++;
			next();
		}

		/** A value that is exactly {@code true} (any other valid value is false). */
		private boolean literalTrue() {
			int start = this.at;
			skipValue();
			return is(start, this.at, TRUE);
		}

		/** Skips one value starting at {@link #at} (whitespace already skipped). */
		private void skipValue() {
			int b = peek();
			if (b == '"') {
				string();
			}
			else if (b == '{' || b == '[') {
				container();
			}
			else {
				scalar();
			}
		}

		/** Skips a number or literal: up to the next delimiter. */
		private void scalar() {
			int start = this.at;
			while (this.at < this.end) {
				byte b = this.buf.getByte(this.at);
				if (b == ',' || b == '}' || b == ']' || isSpace(b)) {
					break;
				}
				if (b == '"' || b == '{' || b == '[' || b == ':') {
					throw Malformed.INSTANCE;
				}
				this.at++;
			}
			if (this.at == start) {
				throw Malformed.INSTANCE;
			}
		}

		/**
		 * Skips an object or array with everything in it, by its brackets and strings
		 * alone.
		 */
		private void container() {
			int depth = 0;
			while (true) {
				int found = this.buf.forEachByte(this.at, this.end - this.at, CONTAINER_RUN);
				if (found < 0) {
					throw Malformed.INSTANCE;
				}
				this.at = found;
				byte b = this.buf.getByte(found);
				if (b == '"') {
					string();
					continue;
				}
				this.at++;
				if (b == '{' || b == '[') {
					if (++depth > MAX_DEPTH) {
						throw Malformed.INSTANCE;
					}
				}
				else if (--depth == 0) {
					return;
				}
			}
		}

		/**
		 * Skips a string starting at {@link #at} (its opening quote).
		 * @return the index of its closing quote; {@link #at} is just past it
		 */
		private int string() {
			if (peek() != '"') {
				throw Malformed.INSTANCE;
			}
			int from = this.at + 1;
			while (true) {
				int found = (from < this.end) ? this.buf.forEachByte(from, this.end - from, STRING_RUN) : -1;
				if (found < 0) {
					throw Malformed.INSTANCE;
				}
				if (this.buf.getByte(found) == '"') {
					this.at = found + 1;
					return found;
				}
				// a backslash: the next byte is escaped, whatever it is
				from = found + 2;
			}
		}

		/** A string value, decoded. */
		private String text() {
			int start = this.at + 1;
			int close = string();
			int escape = this.buf.indexOf(start, close, (byte) '\\');
			if (escape < 0) {
				return this.buf.toString(start, close - start, StandardCharsets.UTF_8);
			}
			return decode(start, close);
		}

		private String decode(int start, int close) {
			byte[] out = new byte[close - start];
			int n = 0;
			StringBuilder text = new StringBuilder(close - start);
			for (int i = start; i < close; i++) {
				byte b = this.buf.getByte(i);
				if (b != '\\') {
					out[n++] = b;
					continue;
				}
				text.append(new String(out, 0, n, StandardCharsets.UTF_8));
				n = 0;
				byte e = this.buf.getByte(++i);
				switch (e) {
					case '"', '\\', '/' -> text.append((char) e);
					case 'b' -> text.append('\b');
					case 'f' -> text.append('\f');
					case 'n' -> text.append('\n');
					case 'r' -> text.append('\r');
					case 't' -> text.append('\t');
					case 'u' -> {
						if (i + 4 >= close) {
							throw Malformed.INSTANCE;
						}
						text.append((char) hex(i + 1));
						i += 4;
					}
					default -> throw Malformed.INSTANCE;
				}
			}
			return text.append(new String(out, 0, n, StandardCharsets.UTF_8)).toString();
		}

		private int hex(int from) {
			int value = 0;
			for (int i = from; i < from + 4; i++) {
				int digit = Character.digit(this.buf.getByte(i), 16);
				if (digit < 0) {
					throw Malformed.INSTANCE;
				}
				value = (value << 4) | digit;
			}
			return value;
		}

		private boolean is(int start, int end, byte[] word) {
			if (end - start != word.length) {
				return false;
			}
			for (int i = 0; i < word.length; i++) {
				if (this.buf.getByte(start + i) != word[i]) {
					return false;
				}
			}
			return true;
		}

		/** Skips whitespace; the byte at {@link #at}, or -1 at the end. */
		private int next() {
			while (this.at < this.end && isSpace(this.buf.getByte(this.at))) {
				this.at++;
			}
			return peek();
		}

		private int peek() {
			return (this.at < this.end) ? this.buf.getByte(this.at) : -1;
		}

		private static boolean isSpace(byte b) {
			return b == ' ' || b == '\n' || b == '\r' || b == '\t';
		}

	}

}
