package dev.tokengap.proxy;

import java.io.InputStream;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufInputStream;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.ObjectReadContext;
import tools.jackson.core.json.JsonFactory;

/**
 * What tokengap needs to know of a request body: the model and whether a stream was asked for.
 * Read with a streaming parser over the bytes as received (or, for a form, from its small
 * fields); the bytes themselves go upstream unchanged.
 *
 * @param model the top-level {@code model}, or null when absent or unreadable
 * @param stream the top-level {@code stream}
 * @param includeUsage {@code stream_options.include_usage}
 */
record RequestFacts(String model, boolean stream, boolean includeUsage) {

	static final RequestFacts NONE = new RequestFacts(null, false, false);

	private static final JsonFactory JSON = new JsonFactory();

	/**
	 * Reads the facts from a JSON or {@code multipart/form-data} body (the audio endpoints send
	 * {@code model} and {@code stream} as form fields); any other body yields {@link #NONE} (it is
	 * forwarded anyway and the engine answers it).
	 * @param body the request body (not consumed: a duplicate is read)
	 * @param contentType the request's {@code Content-Type}, or null
	 * @return the facts
	 */
	static RequestFacts of(ByteBuf body, String contentType) {
		if (!body.isReadable()) {
			return NONE;
		}
		String boundary = MultipartFields.boundary(contentType);
		if (boundary != null) {
			MultipartFields fields = MultipartFields.read(body, boundary);
			return new RequestFacts(fields.value("model"), "true".equalsIgnoreCase(fields.value("stream")),
					"true".equalsIgnoreCase(fields.value("stream_include_usage")));
		}
		return of(body);
	}

	/**
	 * Reads the facts from a JSON body; a body that is not a JSON object yields {@link #NONE}.
	 * @param body the request body (not consumed: a duplicate is read)
	 * @return the facts
	 */
	static RequestFacts of(ByteBuf body) {
		if (!body.isReadable()) {
			return NONE;
		}
		try (InputStream in = new ByteBufInputStream(body.duplicate());
				JsonParser parser = JSON.createParser(ObjectReadContext.empty(), in)) {
			return (parser.nextToken() == JsonToken.START_OBJECT) ? readObject(parser) : NONE;
		}
		catch (JacksonException | java.io.IOException ex) {
			return NONE;
		}
	}

	private static RequestFacts readObject(JsonParser parser) {
		String model = null;
		boolean stream = false;
		boolean includeUsage = false;
		while (parser.nextToken() == JsonToken.PROPERTY_NAME) {
			String name = parser.currentName();
			JsonToken value = parser.nextToken();
			switch (name) {
				case "model" -> model = (value == JsonToken.VALUE_STRING) ? parser.getString() : null;
				case "stream" -> stream = (value == JsonToken.VALUE_TRUE);
				case "stream_options" -> includeUsage = readIncludeUsage(parser, value);
				default -> parser.skipChildren();
			}
		}
		return new RequestFacts(model, stream, includeUsage);
	}

	private static boolean readIncludeUsage(JsonParser parser, JsonToken value) {
		if (value != JsonToken.START_OBJECT) {
			parser.skipChildren();
			return false;
		}
		boolean include = false;
		while (parser.nextToken() == JsonToken.PROPERTY_NAME) {
			String name = parser.currentName();
			JsonToken v = parser.nextToken();
			if ("include_usage".equals(name)) {
				include = (v == JsonToken.VALUE_TRUE);
			}
			parser.skipChildren();
		}
		return include;
	}

}
