package dev.tokengap.testsupport;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An HTTP/1.1 client on a plain socket, for what a real client library will not do:
 * requests no well-behaved client would send ({@link #exchange(int, String)}), going away
 * at a chosen byte, not reading at all, or never finishing a request. The one raw HTTP
 * client of the tests.
 */
public final class RawHttpClient implements AutoCloseable {

	private static final Pattern CONTENT_LENGTH = Pattern.compile("(?im)^content-length:\\s*(\\d+)");

	private static final Pattern STATUS_LINE = Pattern.compile("HTTP/1\\.[01] (\\d{3}) ");

	private final Socket socket;

	private final StringBuilder received = new StringBuilder();

	private long receivedBytes;

	private RawHttpClient(Socket socket) {
		this.socket = socket;
	}

	/**
	 * Connects to a port on loopback.
	 * @param port the port
	 * @param receiveBuffer the socket's receive buffer in bytes, or 0 for the OS default
	 * (set before connecting, so the TCP window is that small from the start)
	 * @return the connected client
	 */
	public static RawHttpClient connect(int port, int receiveBuffer) {
		try {
			Socket socket = new Socket();
			if (receiveBuffer > 0) {
				socket.setReceiveBufferSize(receiveBuffer);
			}
			socket.connect(new InetSocketAddress("127.0.0.1", port), 5000);
			return new RawHttpClient(socket);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * Sends the bytes and reads everything until the server closes the connection (the
	 * caller ends its requests with {@code Connection: close} or expects a refusal).
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
		try (RawHttpClient client = connect(port, 0)) {
			client.send(request.getBytes(StandardCharsets.ISO_8859_1));
			long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
			// A server that refuses before reading everything sent resets: that is a
			// close too.
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

	/** A POST of a JSON body, as its bytes on the wire. */
	public static String post(String path, String json) {
		return "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: "
				+ json.getBytes(StandardCharsets.UTF_8).length + "\r\n\r\n" + json;
	}

	/** Sends the text's UTF-8 bytes as they are. */
	public RawHttpClient send(String text) {
		return send(text.getBytes(StandardCharsets.UTF_8));
	}

	/** Sends bytes as they are. */
	public RawHttpClient send(byte[] bytes) {
		try {
			this.socket.getOutputStream().write(bytes);
			this.socket.getOutputStream().flush();
			return this;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * Reads until what was received contains the marker.
	 * @return everything received so far
	 * @throws AssertionError when the marker does not arrive within the wait
	 */
	public String readUntil(String marker, Duration wait) {
		long deadline = System.nanoTime() + wait.toNanos();
		int from = 0;
		while (this.received.indexOf(marker, from) < 0) {
			// Only the new bytes can complete the marker: a long body is searched once.
			from = Math.max(0, this.received.length() - marker.length());
			if (System.nanoTime() > deadline || readSome(200) < 0) {
				throw new AssertionError("'" + marker + "' did not arrive; received " + this.received.length()
						+ " bytes, ending: " + this.received.substring(Math.max(0, this.received.length() - 500)));
			}
		}
		return this.received.toString();
	}

	/**
	 * Reads until the server closes the connection.
	 * @return whether it closed within the wait
	 */
	public boolean awaitClosed(Duration wait) {
		long deadline = System.nanoTime() + wait.toNanos();
		while (System.nanoTime() < deadline) {
			if (readSome(200) < 0) {
				return true;
			}
		}
		return false;
	}

	/** The number of bytes received so far. */
	public long receivedBytes() {
		return this.receivedBytes;
	}

	/** Everything received so far, one char per byte. */
	public String received() {
		return this.received.toString();
	}

	/**
	 * Reads what arrives within the wait.
	 * @return the bytes read, 0 when nothing came, -1 when the connection closed
	 */
	public int readWithin(Duration wait) {
		return readSome((int) wait.toMillis());
	}

	private int readSome(int timeoutMillis) {
		byte[] buffer = new byte[8192];
		try {
			this.socket.setSoTimeout(timeoutMillis);
			InputStream in = this.socket.getInputStream();
			int read = in.read(buffer);
			if (read > 0) {
				this.receivedBytes += read;
				this.received.append(new String(buffer, 0, read, StandardCharsets.ISO_8859_1));
			}
			return read;
		}
		catch (SocketTimeoutException ex) {
			return 0;
		}
		catch (IOException ex) {
			// A reset is a close too.
			return -1;
		}
	}

	@Override
	public void close() {
		try {
			this.socket.close();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * Everything the server sent on one connection.
	 *
	 * @param text the bytes as ISO-8859-1 text
	 */
	public record Response(String text) {

		/**
		 * @return the status code of each response on the connection, in order
		 */
		public List<Integer> statuses() {
			List<Integer> statuses = new ArrayList<>();
			Matcher matcher = STATUS_LINE.matcher(this.text);
			while (matcher.find()) {
				statuses.add(Integer.parseInt(matcher.group(1)));
			}
			return statuses;
		}

		/**
		 * @return the header fields of the first response, by lower-case name, in order
		 */
		public Map<String, List<String>> firstHeaders() {
			Map<String, List<String>> headers = new LinkedHashMap<>();
			int end = this.text.indexOf("\r\n\r\n");
			String[] lines = this.text.substring(0, (end < 0) ? this.text.length() : end).split("\r\n");
			for (int i = 1; i < lines.length; i++) {
				int colon = lines[i].indexOf(':');
				headers
					.computeIfAbsent(lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT),
							(name) -> new ArrayList<>())
					.add(lines[i].substring(colon + 1).trim());
			}
			return headers;
		}

		/**
		 * @return the body of the first response (after its header block)
		 */
		public String firstBody() {
			int start = this.text.indexOf("\r\n\r\n");
			int next = this.text.indexOf("HTTP/1.", start);
			return (start < 0) ? "" : this.text.substring(start + 4, (next < 0) ? this.text.length() : next);
		}

	}

}
