package dev.tokengap.proxy;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * The path of a request target, as the engine routes on it: without query or fragment,
 * percent-decoded as uvicorn decodes it (an escape that is not two hex digits stays as it
 * is; bytes that are not UTF-8 become U+FFFD), and the path part of an absolute-form
 * target. The common target, with no escape, is returned as it is or as one substring.
 *
 * <p>
 * Read straight from the target's characters. Reactor Netty's {@code fullPath()} parses
 * the target with {@link java.net.URI}, which costs a few hundred nanoseconds and
 * allocations per request and throws on characters that HTTP/1.1 servers take (vLLM's
 * among them), such as <code>&#123;</code>, {@code |} or a bad escape: a request the
 * engine would answer (with a 404) then got a 500 from tokengap.
 */
final class RequestPath {

	private RequestPath() {
	}

	/**
	 * @param target the request target, as it came on the request line
	 * @return its decoded path; empty when it has none
	 */
	static String of(String target) {
		int start = 0;
		if (!target.startsWith("/")) {
			int scheme = target.indexOf("://");
			int from = (scheme >= 0) ? scheme + 3 : 0;
			start = target.indexOf('/', from);
			if (start < 0) {
				return "";
			}
		}
		int end = target.length();
		for (int i = start; i < end; i++) {
			char c = target.charAt(i);
			if (c == '?' || c == '#') {
				end = i;
				break;
			}
		}
		int escape = target.indexOf('%', start);
		if (escape < 0 || escape >= end) {
			return (start == 0 && end == target.length()) ? target : target.substring(start, end);
		}
		return decode(target, start, end);
	}

	private static String decode(String target, int start, int end) {
		ByteArrayOutputStream bytes = new ByteArrayOutputStream(end - start);
		// The request line's chars are its bytes (the HTTP codec reads it as ISO-8859-1);
		// below 256 only ASCII hex digits have a digit value.
		for (int i = start; i < end; i++) {
			char c = target.charAt(i);
			int high = (c == '%' && i + 2 < end) ? Character.digit(target.charAt(i + 1), 16) : -1;
			int low = (high >= 0) ? Character.digit(target.charAt(i + 2), 16) : -1;
			if (low >= 0) {
				bytes.write(high * 16 + low);
				i += 2;
			}
			else {
				bytes.write(c);
			}
		}
		return bytes.toString(StandardCharsets.UTF_8);
	}

}
