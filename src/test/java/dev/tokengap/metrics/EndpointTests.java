package dev.tokengap.metrics;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code endpoint} label of each request path.
 */
class EndpointTests {

	@ParameterizedTest
	@CsvSource({ "/v1/chat/completions, chat_completions", "/v1/completions, completions", "/v1/responses, responses",
			"/v1/messages, messages", "/v1/audio/transcriptions, transcriptions",
			"/v1/audio/translations, translations", "/openai/v1/chat/completions, chat_completions",
			"/v1/responses/resp_1, other", "/v1/models, other", "/metrics, other", "/, other" })
	void labelsEachPath(String path, String label) {
		assertThat(Endpoint.of(path).label()).isEqualTo(label);
	}

}
