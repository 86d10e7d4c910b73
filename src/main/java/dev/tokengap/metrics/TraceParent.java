package dev.tokengap.metrics;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.ThreadLocalRandom;

/**
 * W3C Trace Context level 1 {@code traceparent} values: read, written and made up.
 * <p>
 * A value is {@code version-traceid-parentid-flags} in lower-case hex: version {@code 00}
 * is exactly 55 characters; a later version (any but {@code ff}) is read by its first 55
 * characters, which must be followed by nothing or by {@code -}. The trace id (32 digits)
 * and the parent id (16) must not be all zeros. Whatever else is invalid, and an invalid
 * value is as if none was sent: the caller starts a new trace.
 */
public final class TraceParent {

	/** The header's name. */
	public static final String HEADER = "traceparent";

	/** The companion header's name, forwarded unchanged with a valid parent. */
	public static final String STATE_HEADER = "tracestate";

	/** The length of a version {@code 00} value. */
	static final int LENGTH = 55;

	private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);

	private TraceParent() {
	}

	/**
	 * Reads the trace id of a {@code traceparent} value.
	 * @param value the header's value, or null
	 * @return the 32-digit trace id, or null when the value is absent or invalid
	 */
	public static String traceId(String value) {
		return isValid(value) ? value.substring(3, 35) : null;
	}

	/**
	 * Whether a {@code traceparent} value is valid, as level 1 of the specification reads
	 * it (surrounding spaces and tabs allowed, as in any header value).
	 * @param value the header's value, or null
	 * @return whether its trace id, parent id and flags can be used
	 */
	public static boolean isValid(String value) {
		if (value == null || value.length() < LENGTH) {
			return false;
		}
		if (!hex(value, 0, 2) || (value.charAt(0) == 'f' && value.charAt(1) == 'f')) {
			return false;
		}
		boolean v00 = value.charAt(0) == '0' && value.charAt(1) == '0';
		if (value.length() > LENGTH && (v00 || value.charAt(LENGTH) != '-')) {
			return false;
		}
		return value.charAt(2) == '-' && value.charAt(35) == '-' && value.charAt(52) == '-' && hex(value, 3, 35)
				&& hex(value, 36, 52) && hex(value, 53, 55) && !zeros(value, 3, 35) && !zeros(value, 36, 52);
	}

	/**
	 * Whether a valid value's sampled flag is set.
	 * @param value a value {@link #isValid} accepted
	 * @return whether the caller sampled the trace
	 */
	public static boolean sampled(String value) {
		return (Character.digit(value.charAt(54), 16) & 1) != 0;
	}

	/**
	 * Drops the spaces and tabs around a header value.
	 * @param value the header's value, or null
	 * @return the value without them, or null
	 */
	public static String trim(String value) {
		if (value == null) {
			return null;
		}
		int from = 0;
		int to = value.length();
		while (from < to && isSpace(value.charAt(from))) {
			from++;
		}
		while (to > from && isSpace(value.charAt(to - 1))) {
			to--;
		}
		return (from == 0 && to == value.length()) ? value : value.substring(from, to);
	}

	private static boolean isSpace(char c) {
		return c == ' ' || c == '\t';
	}

	/**
	 * Writes a version {@code 00} value.
	 * @param traceId the 32-digit trace id
	 * @param spanId the 16-digit id of the span that is the receiver's parent
	 * @param sampled whether the trace is sampled
	 * @return the header's value
	 */
	public static String format(String traceId, String spanId, boolean sampled) {
		if (traceId.length() != 32 || spanId.length() != 16) {
			throw new IllegalArgumentException(
					"a trace id has 32 hex digits and a span id 16: " + traceId + ", " + spanId);
		}
		byte[] out = new byte[LENGTH];
		out[0] = '0';
		out[1] = '0';
		out[2] = '-';
		copy(traceId, 0, 32, out, 3);
		out[35] = '-';
		copy(spanId, 0, 16, out, 36);
		out[52] = '-';
		out[53] = '0';
		out[54] = (byte) (sampled ? '1' : '0');
		return new String(out, StandardCharsets.ISO_8859_1);
	}

	/**
	 * A new version {@code 00} value: a random span id under the trace of a valid
	 * {@code traceparent}, or under a new random trace.
	 * @param parent a value {@link #isValid} accepted, whose trace goes on, or null for a
	 * new trace
	 * @param sampled whether the trace is sampled
	 * @return the header's value, written in one array
	 */
	public static String generate(String parent, boolean sampled) {
		ThreadLocalRandom random = ThreadLocalRandom.current();
		byte[] out = new byte[LENGTH];
		out[0] = '0';
		out[1] = '0';
		out[2] = '-';
		if (parent != null) {
			copy(parent, 3, 35, out, 3);
		}
		else {
			long high = random.nextLong();
			long low = random.nextLong();
			if (high == 0 && low == 0) {
				low = 1;
			}
			hex(high, out, 3);
			hex(low, out, 19);
		}
		out[35] = '-';
		long span = random.nextLong();
		hex((span == 0) ? 1 : span, out, 36);
		out[52] = '-';
		out[53] = '0';
		out[54] = (byte) (sampled ? '1' : '0');
		return new String(out, StandardCharsets.ISO_8859_1);
	}

	private static void copy(String from, int start, int end, byte[] into, int at) {
		for (int i = start; i < end; i++) {
			into[at + i - start] = (byte) from.charAt(i);
		}
	}

	private static void hex(long value, byte[] into, int at) {
		for (int i = 15; i >= 0; i--) {
			into[at + i] = HEX[(int) (value & 0xF)];
			value >>>= 4;
		}
	}

	private static boolean hex(String value, int from, int to) {
		for (int i = from; i < to; i++) {
			char c = value.charAt(i);
			if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
				return false;
			}
		}
		return true;
	}

	private static boolean zeros(String value, int from, int to) {
		for (int i = from; i < to; i++) {
			if (value.charAt(i) != '0') {
				return false;
			}
		}
		return true;
	}

}
