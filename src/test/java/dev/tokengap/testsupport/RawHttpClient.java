package dev.tokengap.testsupport;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * An HTTP/1.1 client on a plain socket, for faults a real client library will not make: going
 * away at a chosen byte, not reading at all, or never finishing a request.
 */
public final class RawHttpClient implements AutoCloseable {

	private final Socket socket;

	private final StringBuilder received = new StringBuilder();

	private long receivedBytes;

	private RawHttpClient(Socket socket) {
		this.socket = socket;
	}

	/**
	 * Connects to a port on loopback.
	 * @param port the port
	 * @param receiveBuffer the socket's receive buffer in bytes, or 0 for the OS default (set
	 * before connecting, so the TCP window is that small from the start)
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

}
