package dev.tokengap.proxy;

import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;

/**
 * Copies headers between the client and upstream exchanges minus the hop-by-hop ones (RFC
 * 9110 section 7.6.1), including any named in {@code Connection}.
 */
final class HopByHopHeaders {

	private static final Set<String> ALWAYS = Set.of("connection", "keep-alive", "proxy-connection",
			"proxy-authenticate", "proxy-authorization", "te", "trailer", "transfer-encoding", "upgrade");

	private HopByHopHeaders() {
	}

	/**
	 * Copies every end-to-end header of {@code from} into {@code to}, skipping the names
	 * in {@code skip} too.
	 * @param from the source headers
	 * @param to the target headers
	 * @param skip further lower-case names to leave out
	 */
	static void copy(HttpHeaders from, HttpHeaders to, Set<String> skip) {
		Set<String> named = connectionNamed(from);
		for (var it = from.iteratorCharSequence(); it.hasNext();) {
			var entry = it.next();
			String name = entry.getKey().toString().toLowerCase(Locale.ROOT);
			if (!ALWAYS.contains(name) && !skip.contains(name) && !named.contains(name)) {
				to.add(entry.getKey(), entry.getValue());
			}
		}
	}

	private static Set<String> connectionNamed(HttpHeaders headers) {
		// Every Connection line counts: 'Connection: keep-alive' then 'Connection:
		// x-secret' on
		// the next line names x-secret as much as one combined line does (RFC 9110
		// section 5.3).
		List<String> lines = headers.getAll(HttpHeaderNames.CONNECTION);
		if (lines.isEmpty()) {
			return Set.of();
		}
		Set<String> names = new HashSet<>();
		for (String line : lines) {
			for (String token : line.split(",")) {
				names.add(token.trim().toLowerCase(Locale.ROOT));
			}
		}
		return names;
	}

}
