package dev.tokengap.sim;

import java.io.ByteArrayInputStream;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import org.junit.jupiter.api.Test;
import reactor.netty.http.client.HttpClientForm;
import tools.jackson.databind.JsonNode;

import dev.tokengap.testsupport.StreamingClient;

import static org.assertj.core.api.Assertions.assertThat;

class AudioHandlerTests extends SharedSimulatorTests {

	private static final String TRANSCRIPTIONS = "/v1/audio/transcriptions";

	private static final String TRANSLATIONS = "/v1/audio/translations";

	/** Two seconds of 16 kHz 16-bit mono silence. */
	private static final byte[] AUDIO = new byte[64_000];

	private static Consumer<HttpClientForm> form(boolean stream, boolean usage, int maxTokens) {
		return (form) -> form.attr("model", "sim-llama-3-8b")
			.attr("stream", String.valueOf(stream))
			.attr("stream_include_usage", String.valueOf(usage))
			.attr("max_completion_tokens", String.valueOf(maxTokens))
			.file("file", "speech.wav", new ByteArrayInputStream(AUDIO), "audio/wav");
	}

	@Test
	void streamedTranscriptionIsContentDeltasWithoutPreludeThenUsageThenDone() {
		StreamingClient.Exchange exchange = client.postForm(TRANSCRIPTIONS, form(true, true, 3), Map.of());
		assertThat(exchange.status()).isEqualTo(200);
		assertThat(exchange.headers().get("Content-Type")).isEqualTo("text/event-stream; charset=utf-8");
		List<StreamingClient.Event> events = exchange.events();
		assertThat(events).hasSize(3 + 1 + 1);
		for (int i = 0; i < 3; i++) {
			JsonNode chunk = events.get(i).json();
			assertThat(chunk.path("id").stringValue()).startsWith("trsc-");
			assertThat(chunk.path("object").stringValue()).isEqualTo("transcription.chunk");
			assertThat(events.get(i).data()).contains(",\"choices\":[{\"delta\":{\"content\":\"")
				.doesNotContain("role");
			assertThat(chunk.path("choices").path(0).has("finish_reason")).isEqualTo(i == 2);
		}
		assertThat(events.get(2).data()).endsWith("},\"finish_reason\":\"length\",\"stop_reason\":null}]}");
		JsonNode usage = events.get(3).json();
		assertThat(usage.path("choices").isEmpty()).isTrue();
		assertThat(usage.path("usage").path("prompt_tokens").intValue()).isEqualTo(20);
		assertThat(usage.path("usage").path("completion_tokens").intValue()).isEqualTo(3);
		assertThat(events.get(4).done()).isTrue();
	}

	@Test
	void streamedTranslationUsesItsOwnIdAndObject() {
		List<StreamingClient.Event> events = client.postForm(TRANSLATIONS, form(true, false, 2), Map.of()).events();
		assertThat(events).hasSize(2 + 1);
		assertThat(events.get(0).json().path("id").stringValue()).startsWith("trsl-");
		assertThat(events.get(0).json().path("object").stringValue()).isEqualTo("translation.chunk");
		assertThat(events.get(2).done()).isTrue();
	}

	@Test
	void nonStreamingTranscriptionIsTheWholeText() {
		StreamingClient.Exchange exchange = client.postForm(TRANSCRIPTIONS, form(false, false, 4), Map.of());
		assertThat(exchange.status()).isEqualTo(200);
		assertThat(exchange.json().path("text").stringValue().split(" ")).hasSize(4);
		assertThat(exchange.json().path("usage").path("seconds").intValue()).isEqualTo(2);
	}

	@Test
	void errorAfterEndsTheAudioStreamWithTheInBandErrorAndDone() {
		List<StreamingClient.Event> events = client
			.postForm(TRANSCRIPTIONS, form(true, true, 50), Map.of(FaultHeaders.ERROR_AFTER, "0"))
			.events();
		assertThat(events).hasSize(3);
		assertThat(events.get(1).json().path("error").path("code").intValue()).isEqualTo(500);
		assertThat(events.get(2).done()).isTrue();
	}

	@Test
	void missingFileAndJsonBodiesAreBadRequests() {
		assertThat(client.postForm(TRANSCRIPTIONS, (form) -> form.attr("model", "sim-llama-3-8b"), Map.of()).status())
			.isEqualTo(400);
		assertThat(client.post(TRANSCRIPTIONS, "{\"model\":\"sim-llama-3-8b\"}").status()).isEqualTo(400);
		assertThat(client
			.postForm(TRANSCRIPTIONS,
					(form) -> form.attr("model", "whisper")
						.file("file", "a.wav", new ByteArrayInputStream(AUDIO), "audio/wav"),
					Map.of())
			.status()).isEqualTo(404);
	}

}
