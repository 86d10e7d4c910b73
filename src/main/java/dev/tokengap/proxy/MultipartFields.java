package dev.tokengap.proxy;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;

/**
 * The small text fields of a {@code multipart/form-data} body (RFC 7578), found in place:
 * parts with a {@code filename} (the audio upload) are skipped without being copied, and
 * only the first {@value #MAX_VALUE} bytes of a field are kept. Malformed bodies yield no
 * fields.
 */
final class MultipartFields {

	private static final int MAX_VALUE = 256;

	private static final int MAX_HEADERS = 1024;

	private static final int MAX_FIELDS = 32;

	private static final byte[] HEADERS_END = { '\r', '\n', '\r', '\n' };

	private final Map<String, String> fields;

	private MultipartFields(Map<String, String> fields) {
		this.fields = fields;
	}

	/**
	 * The boundary of a form's content type.
	 * @param contentType the {@code Content-Type} header, or null
	 * @return the boundary, or null when this is no form with one
	 */
	static String boundary(String contentType) {
		if (contentType == null || !contentType.regionMatches(true, 0, "multipart/form-data", 0, 19)) {
			return null;
		}
		for (String parameter : contentType.split(";")) {
			String p = parameter.trim();
			if (p.regionMatches(true, 0, "boundary=", 0, 9)) {
				String value = p.substring(9).trim();
				if (value.length() >= 2 && value.startsWith("\"") && value.endsWith("\"")) {
					value = value.substring(1, value.length() - 1);
				}
				return (value.isEmpty() || value.length() > 70) ? null : value;
			}
		}
		return null;
	}

	/**
	 * Reads the text fields of a form body.
	 * @param body the body (not consumed)
	 * @param boundary its boundary
	 * @return the fields
	 */
	static MultipartFields read(ByteBuf body, String boundary) {
		Map<String, String> fields = new HashMap<>();
		ByteBuf delimiter = Unpooled.wrappedBuffer(("--" + boundary).getBytes(StandardCharsets.US_ASCII));
		ByteBuf headersEnd = Unpooled.wrappedBuffer(HEADERS_END);
		ByteBuf rest = body.duplicate();
		int at = ByteBufUtil.indexOf(delimiter, rest);
		while (at >= 0 && fields.size() < MAX_FIELDS) {
			rest.readerIndex(at + delimiter.readableBytes());
			int headersStop = ByteBufUtil.indexOf(headersEnd, rest);
			if (headersStop < 0 || headersStop - rest.readerIndex() > MAX_HEADERS) {
				break;
			}
			String headers = rest.toString(rest.readerIndex(), headersStop - rest.readerIndex(),
					StandardCharsets.UTF_8);
			rest.readerIndex(headersStop + HEADERS_END.length);
			int next = ByteBufUtil.indexOf(delimiter, rest);
			if (next < 0) {
				break;
			}
			String name = fieldName(headers);
			if (name != null) {
				// the value ends with the CRLF before the next delimiter
				int length = Math.max(0, Math.min(next - 2 - rest.readerIndex(), MAX_VALUE));
				fields.putIfAbsent(name, rest.toString(rest.readerIndex(), length, StandardCharsets.UTF_8).trim());
			}
			at = next;
		}
		return new MultipartFields(fields);
	}

	/**
	 * The {@code name} of a part's Content-Disposition, or null for a file or no name.
	 */
	private static String fieldName(String headers) {
		for (String line : headers.split("\r\n")) {
			if (!line.regionMatches(true, 0, "content-disposition:", 0, 20)) {
				continue;
			}
			String name = null;
			for (String parameter : line.substring(20).split(";")) {
				String p = parameter.trim();
				if (p.regionMatches(true, 0, "filename", 0, 8)) {
					return null;
				}
				if (p.regionMatches(true, 0, "name=", 0, 5)) {
					name = p.substring(5).replace("\"", "").trim();
				}
			}
			return name;
		}
		return null;
	}

	String value(String name) {
		return this.fields.get(name);
	}

}
