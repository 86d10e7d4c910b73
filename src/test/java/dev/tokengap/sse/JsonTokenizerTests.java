package dev.tokengap.sse;

import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

class JsonTokenizerTests {

	private final JsonTokenizer tokenizer = new JsonTokenizer(new JsonPathClassifier());

	@ParameterizedTest
	@ValueSource(strings = { "{}", " {} ", "{}\n", "\n{\"a\":1}", "{\"a\":[]}", "{\"a\":{}}", "{\"a\":[1,2,[3,{}]]}",
			"{\"a\":0,\"b\":-0,\"c\":-0.5,\"d\":10.25e-3,\"e\":1E+9,\"f\":7e0}", "{\"a\":true,\"b\":false,\"c\":null}",
			"{\"a\":\"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\uD83D\\uDE80\"}", "{\"\":\"\"}", "{\"é\":\"🚀\"}",
			"{ \"a\" : [ 1 , 2 ] , \"b\" : { } }", "{\"a\":1}\n\n  " })
	void acceptsAWellFormedObject(String json) {
		assertThat(scan(json)).isTrue();
	}

	@ParameterizedTest
	@ValueSource(strings = { "", " ", "[]", "\"x\"", "42", "null", "{", "{\"a\":1", "{\"a\":\"x", "{}{}", "{}x",
			"{} {}", "{\"a\":01}", "{\"a\":-}", "{\"a\":-a}", "{\"a\":1.}", "{\"a\":.5}", "{\"a\":1e}", "{\"a\":1e+}",
			"{\"a\":+1}", "{\"a\":1.2.3}", "{\"a\":tru}", "{\"a\":nul}", "{\"a\":truex}", "{\"a\":True}",
			"{\"a\":\"\\x\"}", "{\"a\":\"\\u12G4\"}", "{\"a\":\"\\u12\"}", "{\"a\":1,}", "{,}", "{\"a\"}", "{\"a\" 1}",
			"{\"a\":1 \"b\":2}", "{a:1}", "{'a':1}", "{\"a\":[1,]}", "{\"a\":[,1]}", "{\"a\":[}", "{\"a\":{]}",
			"{\"a\":1]}", "{\"a\":[1}}", "{\"a\":\"x\ty\"}", "{\"a\":\"x\ny\"}", "{\"a\":\"x\u0000\"}", "{\"a\":1}}",
			"{\"a\"::1}", "{1:2}", "{\"a\":[\"b\":1]}" })
	void rejectsAnythingButOneWellFormedObject(String json) {
		assertThat(scan(json)).isFalse();
	}

	@Test
	void skipsContainersNestedDeeperThanItTracks() {
		String deep = "[".repeat(100) + "{\"a\":\"]]]\\\"\"}" + "]".repeat(100);
		assertThat(scan("{\"x\":" + deep + "}")).isTrue();
		assertThat(scan("{\"x\":" + deep)).isFalse();
		assertThat(scan("{\"x\":" + "[".repeat(100) + "]".repeat(99) + "}")).isFalse();
		assertThat(scan("{\"x\":" + "[".repeat(100_000) + "]".repeat(100_000) + "}")).isTrue();
	}

	@ParameterizedTest
	@CsvSource({ "0, 0", "7, 7", "1234567, 1234567", "-1, -1", "1.5, -1", "2e3, -1", "18446744073709551616, -1" })
	void readsNonNegativeIntegersForTheirValue(String number, long expected) {
		JsonPathClassifier paths = new JsonPathClassifier();
		JsonTokenizer tokenizer = new JsonTokenizer(paths);
		feed(tokenizer, "{\"usage\":{\"completion_tokens\":" + number + "}}");
		assertThat(tokenizer.isComplete()).isTrue();
		assertThat(paths.outputTokens()).isEqualTo(expected);
	}

	private boolean scan(String json) {
		this.tokenizer.reset();
		feed(this.tokenizer, json);
		return this.tokenizer.isComplete();
	}

	private static void feed(JsonTokenizer tokenizer, String json) {
		for (byte b : json.getBytes(StandardCharsets.UTF_8)) {
			tokenizer.accept(b);
		}
	}

}
