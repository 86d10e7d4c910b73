package dev.tokengap.proxy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

class RequestPathTests {

	@ParameterizedTest
	@CsvSource(delimiterString = " => ", quoteCharacter = '\'', textBlock = """
			/v1/chat/completions => /v1/chat/completions
			/v1/chat/completions?stream=true => /v1/chat/completions
			/v1/chat/completions#frag => /v1/chat/completions
			/v1/models?x=a#b?c => /v1/models
			/ => /
			/? => /
			/v1/{x} => /v1/{x}
			/v1/a|b => /v1/a|b
			/v1/a^b`c\\d => /v1/a^b`c\\d
			/v1/chat%2Fcompletions => /v1/chat/completions
			/v1/%63hat/completions => /v1/chat/completions
			/v1/%zz => /v1/%zz
			/v1/a%2 => /v1/a%2
			/v1/a% => /v1/a%
			/v1/a%2?x=%41 => /v1/a%2
			/v1/caf%C3%A9 => /v1/café
			/v1/%FF => /v1/\uFFFD
			/v1/a%20b => /v1/a b
			http://example.com/v1/models?x=1 => /v1/models
			http://example.com:8080 => ''
			example.com/v1/x => /v1/x
			* => ''
			""")
	void readsThePathTheEngineRoutesOn(String target, String path) {
		assertThat(RequestPath.of(target)).isEqualTo(path);
	}

	@Test
	void returnsATargetWithNothingToStripAsItIs() {
		String target = "/v1/chat/completions";
		assertThat(RequestPath.of(target)).isSameAs(target);
	}

	@Test
	void decodesTheRequestLinesBytesAsUtf8() {
		// the codec reads the request line one byte per char: raw UTF-8 stays UTF-8
		String rawUtf8 = new String("/v1/café%21".getBytes(java.nio.charset.StandardCharsets.UTF_8),
				java.nio.charset.StandardCharsets.ISO_8859_1);
		assertThat(RequestPath.of(rawUtf8)).isEqualTo("/v1/café!");
	}

}
