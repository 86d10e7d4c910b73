package dev.tokengap.sim;

import java.util.List;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;

import dev.tokengap.testsupport.StreamingClient;

import static dev.tokengap.sim.FastSimulator.CHAT;
import static dev.tokengap.sim.FastSimulator.chatBody;
import static org.assertj.core.api.Assertions.assertThat;

class TokenVocabularyTests {

	@Test
	void sameSeedAndPromptGiveTheSameTexts() {
		assertThat(texts(new TokenVocabulary(42), "hello", 50)).isEqualTo(texts(new TokenVocabulary(42), "hello", 50));
		assertThat(texts(new TokenVocabulary(42), "hello", 50))
			.isNotEqualTo(texts(new TokenVocabulary(7), "hello", 50));
		assertThat(texts(new TokenVocabulary(42), "hello", 50)).isNotEqualTo(texts(new TokenVocabulary(42), "bye", 50));
	}

	@Test
	void everyTextIsAWordAndASpace() {
		assertThat(texts(new TokenVocabulary(1), "x", 200)).allMatch((text) -> text.matches("\\S+ "));
	}

	@Test
	void sameSeedAndRequestGiveTheSameStreamedTokensOnAnotherServer() {
		String body = chatBody("Determinism, please", 12);
		List<String> first = streamedTexts(FastSimulator.properties().build(), body);
		List<String> second = streamedTexts(FastSimulator.properties().build(), body);
		List<String> otherSeed = streamedTexts(FastSimulator.properties().seed(7).build(), body);
		assertThat(first).hasSize(12).isEqualTo(second).isNotEqualTo(otherSeed);
	}

	private static List<String> streamedTexts(SimulatorProperties properties, String body) {
		try (SimulatorServer server = FastSimulator.start(properties)) {
			return FastSimulator.client(server)
				.post(CHAT, body)
				.contentEvents()
				.stream()
				.map(StreamingClient.Event::content)
				.toList();
		}
	}

	private static List<String> texts(TokenVocabulary vocabulary, String prompt, int count) {
		TokenVocabulary.Texts texts = vocabulary.textsFor(prompt);
		return IntStream.range(0, count).mapToObj((i) -> texts.next()).toList();
	}

}
