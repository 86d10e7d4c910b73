package dev.tokengap.sse;

import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

class JsonPathClassifierTests {

	private final JsonPathClassifier paths = new JsonPathClassifier();

	private final JsonTokenizer tokenizer = new JsonTokenizer(this.paths);

	@ParameterizedTest(name = "{0} -> {1}")
	@CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
			{"choices":[{"index":0,"delta":{"content":"Hello"},"logprobs":null,"finish_reason":null}]}          | CONTENT
			{"choices":[{"delta":{"content":"\\n"}}]}                                                             | CONTENT
			{"choices":[{"delta":{"content":"\\u00e9"}}]}                                                         | CONTENT
			{"choices":[{"delta":{"content":"é"}}]}                                                               | CONTENT
			{"choices":[{"delta":{"content":" "}}]}                                                               | CONTENT
			{"choices":[{"delta":{"reasoning_content":"Hmm"}}]}                                                   | CONTENT
			{"choices":[{"delta":{"reasoning":"Hmm"}}]}                                                           | CONTENT
			{"choices":[{"delta":{"reasoning_content":null,"content":"x"}}]}                                      | CONTENT
			{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]}}]}                    | CONTENT
			{"choices":[{"index":0,"text":" Paris","logprobs":null,"finish_reason":null}],"usage":null}           | CONTENT
			{"choices":[{"index":0,"delta":{"content":""}},{"index":1,"delta":{"content":"b"}}]}                  | CONTENT
			{"choices":[{"delta":{"content":"x"}},"str",1,null]}                                                  | CONTENT
			{"choices":[{"delta":{"con\\u0074ent":"x"}}]}                                                         | CONTENT
			{ "choices" : [ { "delta" : { "content" : "x" } } ] }                                                 | CONTENT
			{"id":"c","choices":[{"delta":{"content":"x"}}],"n":[-1.5e-3,0,1E+2,true,false,null,{"a":[]},[[]]]}    | CONTENT
			{"choices":[{"index":0,"delta":{"content":""},"finish_reason":"stop","stop_reason":null}]}            | OTHER
			{"choices":[{"index":0,"delta":{"content":null}}]}                                                    | OTHER
			{"choices":[{"index":0,"delta":{}}]}                                                                  | OTHER
			{"choices":[{"delta":{"reasoning":"","reasoning_content":"","content":""}}]}                          | OTHER
			{"choices":[{"delta":{"tool_calls":[]}}]}                                                             | OTHER
			{"choices":[{"delta":{"tool_calls":null}}]}                                                           | OTHER
			{"choices":[{"index":0,"text":"","finish_reason":"length","stop_reason":null}],"usage":null}          | OTHER
			{"choices":[{"index":0,"text":null}]}                                                                 | OTHER
			{"choices":[{"delta":{"content":""},"logprobs":{"content":[{"token":"a","logprob":-0.1,"bytes":[97],"top_logprobs":[]}]}}]} | OTHER
			{"choices":[{"delta":{"extra":{"text":"x","content":"y","tool_calls":[1],"role":"r"}}}]}              | OTHER
			{"choices":[{"message":{"role":"assistant","content":"x"}}]}                                          | OTHER
			{"content":"x","text":"y","role":"r","delta":{"content":"z"},"tool_calls":[1]}                        | OTHER
			{"choices":{"delta":{"content":"x"}}}                                                                 | OTHER
			{"choices":[[{"delta":{"content":"x"}}]]}                                                             | OTHER
			{"choices":[{"delta":[{"content":"x"}]}]}                                                             | OTHER
			{"x":{"choices":[{"delta":{"content":"x"}}]}}                                                         | OTHER
			{"choices":[{"delta":{"contents":"x","conten":"y","Content":"z"}}]}                                   | OTHER
			{"choices":[{"delta":{"content_of_a_key_that_is_longer_than_32_bytes":"x"}}]}                         | OTHER
			{"choices":[{"delta":{"content":42}}]}                                                                | OTHER
			{"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]} | PRELUDE
			{"choices":[{"index":0,"delta":{"role":"assistant"}}]}                                                | PRELUDE
			{"choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"}}]}                                 | CONTENT
			{"choices":[{"delta":{"role":"assistant","content":""}}],"usage":{"prompt_tokens":5,"total_tokens":5,"completion_tokens":0}} | PRELUDE/0
			{"role":"assistant","choices":[]}                                                                     | OTHER
			{"choices":[],"usage":{"prompt_tokens":18,"total_tokens":25,"completion_tokens":7}}                   | USAGE/7
			{"usage":{"completion_tokens":7}}                                                                     | USAGE/7
			{"choices":[],"usage":{}}                                                                             | USAGE
			{"choices":null,"usage":{"completion_tokens":3}}                                                      | USAGE/3
			{"choices":[],"usage":null}                                                                           | OTHER
			{"usage":[{"completion_tokens":3}]}                                                                   | OTHER
			{"x":{"usage":{"completion_tokens":3}}}                                                               | OTHER
			{"completion_tokens":3,"choices":[]}                                                                  | OTHER
			{"choices":[{"delta":{"content":""},"finish_reason":"stop"}],"usage":{"completion_tokens":9}}         | OTHER/9
			{"choices":[{"delta":{"content":"x"}}],"usage":{"completion_tokens":9}}                               | CONTENT/9
			{"usage":{"completion_tokens":0}}                                                                     | USAGE/0
			{"usage":{"completion_tokens":7.0}}                                                                   | USAGE
			{"usage":{"completion_tokens":7e0}}                                                                   | USAGE
			{"usage":{"completion_tokens":-7}}                                                                    | USAGE
			{"usage":{"completion_tokens":"7"}}                                                                   | USAGE
			{"usage":{"completion_tokens":9223372036854775807}}                                                   | USAGE/9223372036854775807
			{"usage":{"completion_tokens":9223372036854775808}}                                                   | USAGE
			{"usage":{"completion_tokens_details":{"completion_tokens":3}}}                                       | USAGE
			{"usage":{"completion_tokens":3,"completion_tokens":4}}                                               | USAGE/4
			{"error":{"message":"x","type":"BadRequestError","param":null,"code":400}}                            | ERROR
			{"error": {"object": "error", "message": "x", "type": "InternalServerError", "param": null, "code": 500}} | ERROR
			{"object":"error","message":"x","type":"BadRequestError","param":null,"code":400}                     | ERROR
			{"object":"\\u0065rror"}                                                                              | ERROR
			{"error":"Unauthorized"}                                                                              | ERROR
			{"choices":[{"delta":{"content":"x"}}],"error":{"code":500}}                                          | ERROR
			{"error":{"code":500},"usage":{"completion_tokens":3}}                                                | ERROR/3
			{"error":null,"choices":[{"delta":{"content":"x"}}]}                                                  | CONTENT
			{"object":"chat.completion.chunk","choices":[]}                                                       | OTHER
			{"object":"errors"}                                                                                   | OTHER
			{"object":{"error":1}}                                                                                | OTHER
			{"x":{"error":{"code":1},"object":"error"}}                                                           | OTHER
			{"choices":[{"error":"x","object":"error","delta":{"content":"a"}}]}                                  | CONTENT
			{}                                                                                                    | OTHER
			""")
	void classifiesAChunkByTheKeysAtItsPaths(String json, String expected) {
		assertThat(classify(json)).isEqualTo(expected);
	}

	@Test
	void followsTheChunkPastSubtreesTooDeepToTrack() {
		String deep = "[".repeat(200) + "\"]}\\\"[{\"" + "]".repeat(200);
		assertThat(classify("{\"deep\":" + deep + ",\"choices\":[{\"delta\":{\"content\":\"x\"}}]}"))
			.isEqualTo("CONTENT");
		assertThat(classify("{\"choices\":[{\"x\":" + deep + ",\"delta\":{\"role\":\"assistant\"}}]}"))
			.isEqualTo("PRELUDE");
	}

	@Test
	void matchesAKeyOfExactlyTheLengthItCaptures() {
		String key = "k".repeat(JsonStringReader.MAX_TEXT);
		assertThat(classify("{\"choices\":[{\"delta\":{\"" + key + "\":\"x\",\"content\":\"y\"}}]}"))
			.isEqualTo("CONTENT");
	}

	@Test
	void startsOverAfterReset() {
		assertThat(classify("{\"error\":{\"code\":500},\"usage\":{\"completion_tokens\":3}}")).isEqualTo("ERROR/3");
		assertThat(classify("{\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}")).isEqualTo("PRELUDE");
	}

	private String classify(String json) {
		this.tokenizer.reset();
		this.paths.reset();
		for (byte b : json.getBytes(StandardCharsets.UTF_8)) {
			this.tokenizer.accept(b);
		}
		assertThat(this.tokenizer.isComplete()).as("well-formed: %s", json).isTrue();
		long tokens = this.paths.outputTokens();
		return (tokens >= 0) ? this.paths.kind(null, 0) + "/" + tokens : this.paths.kind(null, 0).name();
	}

}
