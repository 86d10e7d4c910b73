package dev.tokengap.testsupport;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One-shot exchanges of raw bytes with a loopback HTTP port over a {@link RawHttpClient}, read
 * until the server closes or has sent the responses expected: for requests no well-behaved client
 * would send.
 */
public final class RawHttp {

	private static final Pattern CONTENT_LENGTH = Pattern.compile("(?im)^content-length:\\s*(\\d+)");

	private static final Pattern STATUS_LINE = Pattern.compile("HTTP/1\\.[01] (\\d{3}) ");

	private RawHttp() {
	}

	/**
	 * Sends the bytes and reads everything until the server closes the connection (the caller
	 * ends its requests with {@code Connection: close} or expects a refusal).
	 * @param port the loopback port
	 * @param request the bytes to send, as ISO-8859-1 text
	 * @return what came back
	 */
	public static Response exchange(int port, String request) {
		return exchange(port, request, Integer.MAX_VALUE);
	}

	/**
	 * Sends the bytes and reads until the server closes the connection or has sent
	 * {@code responses} whole responses (each framed by its {@code Content-Length}).
	 * @param port the loopback port
	 * @param request the bytes to send, as ISO-8859-1 text
	 * @param responses how many responses to wait for at most
	 * @return what came back
	 */
	public static Response exchange(int port, String request, int responses) {
		try (RawHttpClient client = RawHttpClient.connect(port, 0)) {
			client.send(request.getBytes(StandardCharsets.ISO_8859_1));
			long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
			// A server that refuses before reading everything sent resets: that is a close too.
			while (complete(client.received()) < responses && System.nanoTime() < deadline
					&& client.readWithin(Duration.ofMillis(200)) >= 0) {
			}
			return new Response(client.received());
		}
	}

	private static int complete(String text) {
		int count = 0;
		int at = 0;
		while (true) {
			int headersEnd = text.indexOf("\r\n\r\n", at);
			if (headersEnd < 0) {
				return count;
			}
			Matcher length = CONTENT_LENGTH.matcher(text.substring(at, headersEnd));
			int end = headersEnd + 4 + (length.find() ? Integer.parseInt(length.group(1)) : 0);
			if (end > text.length()) {
				return count;
			}
			count++;
			at = end;
		}
	}

	/**
	 * Everything the server sent on one connection.
	 *
	 * @param text the bytes as ISO-8859-1 text
	 */
	public record Response(String text) {

		/** @return the status code of each response on the connection, in order */
		public java.util.List<Integer> statuses() {
			java.util.List<Integer> statuses = new java.util.ArrayList<>();
			Matcher matcher = STATUS_LINE.matcher(this.text);
			while (matcher.find()) {
				statuses.add(Integer.parseInt(matcher.group(1)));
			}
			return statuses;
		}

		/** @return the header fields of the first response, by lower-case name, in order */
		public java.util.Map<String, java.util.List<String>> firstHeaders() {
			java.util.Map<String, java.util.List<String>> headers = new java.util.LinkedHashMap<>();
			int end = this.text.indexOf("\r\n\r\n");
			String[] lines = this.text.substring(0, (end < 0) ? this.text.length() : end).split("\r\n");
			for (int i = 1; i < lines.length; i++) {
				int colon = lines[i].indexOf(':');
				headers.computeIfAbsent(lines[i].substring(0, colon).trim().toLowerCase(java.util.Locale.ROOT),
						(name) -> new java.util.ArrayList<>())
					.add(lines[i].substring(colon + 1).trim());
			}
			return headers;
		}

		/** @return the body of the first response (after its header block) */
		public String firstBody() {
			int start = this.text.indexOf("\r\n\r\n");
			int next = this.text.indexOf("HTTP/1.", start);
			return (start < 0) ? "" : this.text.substring(start + 4, (next < 0) ? this.text.length() : next);
		}

	}

}
