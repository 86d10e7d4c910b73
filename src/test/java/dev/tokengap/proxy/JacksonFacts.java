package dev.tokengap.proxy;

import java.io.IOException;
import java.io.InputStream;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufInputStream;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.ObjectReadContext;
import tools.jackson.core.json.JsonFactory;

/**
 * What a JSON parser reads of a request: Jackson's streaming parser over the root
 * object's members, as tokengap read bodies before its scanner. The oracle of
 * {@link RequestFactsTests} and the baseline of {@link RequestFactsBenchmark}.
 */
final class JacksonFacts {

	private static final JsonFactory JSON = new JsonFactory();

	private JacksonFacts() {
	}

	static RequestFacts of(ByteBuf body) {
		try (InputStream in = new ByteBufInputStream(body.duplicate());
				JsonParser parser = JSON.createParser(ObjectReadContext.empty(), in)) {
			if (parser.nextToken() != JsonToken.START_OBJECT) {
				return RequestFacts.NONE;
			}
			String model = null;
			boolean stream = false;
			boolean includeUsage = false;
			while (parser.nextToken() == JsonToken.PROPERTY_NAME) {
				String name = parser.currentName();
				JsonToken value = parser.nextToken();
				switch (name) {
					case "model" -> model = (value == JsonToken.VALUE_STRING) ? parser.getString() : null;
					case "stream" -> stream = (value == JsonToken.VALUE_TRUE);
					case "stream_options" -> includeUsage = includeUsage(parser, value);
					default -> {
					}
				}
				// (the parse before the scanner skipped nothing after "model" or
				// "stream": an object there ended its read of the root early)
				parser.skipChildren();
			}
			return new RequestFacts(model, stream, includeUsage);
		}
		catch (JacksonException | IOException ex) {
			return RequestFacts.NONE;
		}
	}

	private static boolean includeUsage(JsonParser parser, JsonToken value) {
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
