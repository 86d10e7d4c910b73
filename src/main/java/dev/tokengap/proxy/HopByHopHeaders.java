package dev.tokengap.proxy;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.util.AsciiString;

/**
 * Copies headers between the client and upstream exchanges minus the hop-by-hop ones (RFC
 * 9110 section 7.6.1), including any named in {@code Connection}. It runs twice per
 * request, so a header's name is compared in place, ignoring case, against the few names
 * to leave out: no lower-cased copy of each name and no hashing.
 */
final class HopByHopHeaders {

	private static final String[] ALWAYS = { "connection", "keep-alive", "proxy-connection", "proxy-authenticate",
			"proxy-authorization", "te", "trailer", "transfer-encoding", "upgrade" };

	private final AsciiString[] dropped;

	/**
	 * Bit {@code n} is set when a dropped name is {@code n} characters long (all are
	 * shorter than 64): most names are kept on that one test.
	 */
	private final long lengths;

	private HopByHopHeaders(AsciiString[] dropped) {
		this.dropped = dropped;
		long lengths = 0;
		for (AsciiString name : dropped) {
			if (name.length() >= Long.SIZE) {
				throw new IllegalArgumentException("header name longer than 63 characters: " + name);
			}
			lengths |= 1L << name.length();
		}
		this.lengths = lengths;
	}

	/**
	 * The hop-by-hop headers and some more names to leave out.
	 * @param more further names to leave out (any case)
	 * @return the names to give {@link #copy}
	 */
	static HopByHopHeaders andAlso(String... more) {
		AsciiString[] dropped = new AsciiString[ALWAYS.length + more.length];
		for (int i = 0; i < dropped.length; i++) {
			String name = (i < ALWAYS.length) ? ALWAYS[i] : more[i - ALWAYS.length];
			dropped[i] = AsciiString.of(name);
		}
		return new HopByHopHeaders(dropped);
	}

	/**
	 * Copies every end-to-end header of {@code from} into {@code to}, leaving out these
	 * names and any that a {@code Connection} header of {@code from} names.
	 * @param from the source headers
	 * @param to the target headers
	 */
	void copy(HttpHeaders from, HttpHeaders to) {
		// Every Connection line counts: 'Connection: keep-alive' then 'Connection:
		// x-secret' on the next line names x-secret as much as one combined line does
		// (RFC 9110 section 5.3). Netty's containsValue reads every line's
		// comma-separated, trimmed names, ignoring case, in place.
		boolean connection = from.contains(HttpHeaderNames.CONNECTION);
		for (var it = from.iteratorCharSequence(); it.hasNext();) {
			var entry = it.next();
			CharSequence name = entry.getKey();
			if (!dropped(name) && !(connection && from.containsValue(HttpHeaderNames.CONNECTION, name, true))) {
				to.add(name, entry.getValue());
			}
		}
	}

	private boolean dropped(CharSequence name) {
		int length = name.length();
		if (length >= Long.SIZE || (this.lengths & (1L << length)) == 0) {
			return false;
		}
		for (AsciiString candidate : this.dropped) {
			// compares lengths first
			if (candidate.contentEqualsIgnoreCase(name)) {
				return true;
			}
		}
		return false;
	}

}
