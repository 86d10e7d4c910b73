package dev.tokengap.proxy;

import java.util.Locale;
import java.util.Set;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;

/**
 * Copies headers between the client and upstream exchanges minus the hop-by-hop ones (RFC 9110
 * section 7.6.1), including any named in {@code Connection}.
 */
final class HopByHopHeaders {

	private static final Set<String> ALWAYS = Set.of("connection", "keep-alive", "proxy-connection",
			"proxy-authenticate", "proxy-authorization", "te", "trailer", "transfer-encoding", "upgrade");

	private HopByHopHeaders() {
	}

	/**
	 * Copies every end-to-end header of {@code from} into {@code to}, skipping the names in
	 * {@code skip} too.
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
		String connection = headers.get(HttpHeaderNames.CONNECTION);
		if (connection == null || connection.isEmpty()) {
			return Set.of();
		}
		Set<String> names = new java.util.HashSet<>();
		for (String token : connection.split(",")) {
			names.add(token.trim().toLowerCase(Locale.ROOT));
		}
		return names;
	}

}
