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
	@CsvSource(delimiter = '|', quoteCharacter = '`',
			textBlock = """
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
					{"choices":[],"usage":{"completion_tokens":128},"metrics":{"queue_time_ms":12.3,"mean_itl_ms":9.1}}    | USAGE/128
					{"choices":[],"usage":{"completion_tokens":128},"metrics":null}                                       | USAGE/128
					{"choices":[],"usage":{"completion_tokens":7},"metrics":{"choices":[{"delta":{"content":"x"}}]}}       | USAGE/7
					{"type":"response.completed","response":{"usage":{"output_tokens":5},"metrics":{"queue_time_ms":1}}}  | DONE/5
					{"choices":[{"delta":{"content":"x","metrics":{"queue_time_ms":1}}}],"metrics":null}                  | CONTENT
					{"choices":[],"metrics":{"type":"error","error":{"code":1},"object":"error"}}                         | OTHER
					{"metrics":{"usage":{"completion_tokens":3}},"response":{"metrics":{"usage":{"output_tokens":3}}}}    | OTHER
					{"metrics":{"role":"assistant","content":"x","delta":"y"},"type":"response.output_text.delta"}        | OTHER
					""")
	void classifiesAChunkByTheKeysAtItsPaths(String json, String expected) {
		assertThat(classify(json)).isEqualTo(expected);
	}

	/**
	 * Expected: the queue, first token, generation and mean ITL figures and the
	 * preemptions.
	 */
	@ParameterizedTest(name = "{0} -> {1}")
	@CsvSource(delimiter = '|', quoteCharacter = '`',
			textBlock = """
					{"choices":[],"usage":{"completion_tokens":128},"metrics":{"time_to_first_token_ms":85.2,"generation_time_ms":1240.5,"queue_time_ms":12.3,"mean_itl_ms":9.1,"tokens_per_second":103.2}} | 12.3 85.2 1240.5 9.1 -1
					{"type":"response.completed","response":{"id":"resp_x","usage":{"output_tokens":5},"metrics":{"queue_time_ms":0.5,"num_preemptions":2}}} | 0.5 NaN NaN NaN 2
					{"metrics":{"queue_time_ms":12,"time_to_first_token_ms":1.5e-05,"generation_time_ms":2.5E+3,"mean_itl_ms":-0.0}} | 12.0 1.5E-5 2500.0 -0.0 -1
					{"metrics":{"queue_time_ms":1e2,"time_to_first_token_ms":10.25e-1,"generation_time_ms":0.001,"mean_itl_ms":123456.789}} | 100.0 1.025 0.001 123456.789 -1
					{"metrics":{"queue_time_ms":null,"time_to_first_token_ms":null,"generation_time_ms":7.0,"mean_itl_ms":null}} | NaN NaN 7.0 NaN -1
					{"metrics":{"queue_time_ms":"12.3","time_to_first_token_ms":true,"generation_time_ms":{},"mean_itl_ms":[1],"num_preemptions":"2"}} | none
					{"metrics":{"queue_time_ms":"NaN","mean_itl_ms":1e999,"num_preemptions":1.0}}                      | none
					{"metrics":{"queue_time_ms":null,"time_to_first_token_ms":null,"generation_time_ms":null,"mean_itl_ms":null}} | none
					{"metrics":{"num_preemptions":0}}                                                                    | NaN NaN NaN NaN 0
					{"metrics":{"num_preemptions":-1,"tokens_per_second":103.2}}                                         | none
					{"metrics":null}                                                                                     | none
					{"metrics":{}}                                                                                       | none
					{"metrics":[{"queue_time_ms":1}]}                                                                    | none
					{"metrics":{"x":{"queue_time_ms":1},"y":[{"mean_itl_ms":2}]}}                                        | none
					{"metrics":{"Queue_time_ms":1,"queue_time":2,"queue_time_ms_":3}}                                    | none
					{"metrics":{"queue_time_ms":1,"queue_time_ms":2}}                                                    | 2.0 NaN NaN NaN -1
					{"choices":[{"index":0,"delta":{"content":"x","metrics":{"queue_time_ms":1}},"metrics":{"queue_time_ms":1}}]} | none
					{"choices":[{"delta":{"content":"\\"metrics\\":{\\"queue_time_ms\\":1}"}}]}                          | none
					{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\\"metrics\\":{\\"queue_time_ms\\":1}}"}}]}}]} | none
					{"choices":[],"usage":{"completion_tokens":3,"metrics":{"queue_time_ms":1}}}                         | none
					{"x":{"metrics":{"queue_time_ms":1}}}                                                                | none
					{"response":{"usage":{"metrics":{"queue_time_ms":1}},"output":[{"metrics":{"queue_time_ms":1}}]}}    | none
					{"delta":{"metrics":{"queue_time_ms":1}},"type":"content_block_delta"}                               | none
					{"queue_time_ms":1,"response":{"queue_time_ms":2}}                                                   | none
					""")
	void readsTheEnginesPerRequestMetricsOnlyAtTheirTwoPaths(String json, String expected) {
		classify(json);
		String engine = this.paths.engineMetrics() ? this.paths.queueMs() + " " + this.paths.firstTokenMs() + " "
				+ this.paths.generationMs() + " " + this.paths.meanItlMs() + " " + this.paths.preemptions() : "none";
		assertThat(engine).isEqualTo(expected);
	}

	@Test
	void forgetsTheEnginesMetricsOnReset() {
		classify("{\"metrics\":{\"queue_time_ms\":1,\"num_preemptions\":3}}");
		assertThat(this.paths.engineMetrics()).isTrue();
		classify("{\"choices\":[],\"usage\":{\"completion_tokens\":3}}");
		assertThat(this.paths.engineMetrics()).isFalse();
		assertThat(this.paths.queueMs()).isNaN();
		assertThat(this.paths.preemptions()).isEqualTo(-1);
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
