package dev.tokengap.proxy;

import java.nio.charset.StandardCharsets;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponseStatus;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerResponse;

/**
 * Writes tokengap's own error responses in the shape vLLM uses, so OpenAI clients surface
 * them like engine errors:
 * {@code {"error":{"message":…,"type":…,"param":null,"code":N}}}.
 */
final class ErrorResponses {

	private ErrorResponses() {
	}

	/**
	 * Sends an error response; only valid before the response is committed.
	 * @param response the client response
	 * @param status the HTTP status
	 * @param type the error type, e.g. {@code BadGatewayError}
	 * @param message a human-readable message (no request content); null for none
	 * @return completes when written
	 */
	static Mono<Void> send(HttpServerResponse response, int status, String type, String message) {
		byte[] json = json(status, type, message).getBytes(StandardCharsets.UTF_8);
		response.status(HttpResponseStatus.valueOf(status));
		response.header(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON);
		response.header(HttpHeaderNames.CONTENT_LENGTH, Integer.toString(json.length));
		// The bytes are wrapped only when the send takes them: a connection that closed
		// first (the send fails without reading its body) leaves no buffer behind.
		return response.sendByteArray(Mono.just(json)).then();
	}

	static String json(int status, String type, String message) {
		String text = (message != null) ? message : "";
		return "{\"error\":{\"message\":\"" + escape(text) + "\",\"type\":\"" + escape(type)
				+ "\",\"param\":null,\"code\":" + status + "}}";
	}

	private static String escape(String s) {
		StringBuilder out = new StringBuilder(s.length() + 8);
		for (int i = 0; i < s.length(); i++) {
			char c = s.charAt(i);
			switch (c) {
				case '"' -> out.append("\\\"");
				case '\\' -> out.append("\\\\");
				case '\n' -> out.append("\\n");
				case '\r' -> out.append("\\r");
				case '\t' -> out.append("\\t");
				default -> {
					if (c < 0x20) {
						out.append(String.format("\\u%04x", (int) c));
					}
					else {
						out.append(c);
					}
				}
			}
		}
		return out.toString();
	}

}
