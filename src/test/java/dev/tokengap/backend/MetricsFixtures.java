package dev.tokengap.backend;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.stream.Collectors;

/**
 * The vLLM {@code /metrics} fixtures under {@code fixtures/vllm-metrics/}.
 */
final class MetricsFixtures {

	static final String V1_FULL = "v1-full.txt";

	static final String DESIGN_DOC_EXCERPT = "v1-design-doc-excerpt.txt";

	static final String PID_EXCERPT = "v1-multiprocess-pid-excerpt.txt";

	private MetricsFixtures() {
	}

	/**
	 * A fixture as an exposition: the design-doc excerpt's {@code ...} elision lines (not part of
	 * any exposition, see the fixtures' README) removed.
	 */
	static String exposition(String name) {
		String text = raw(name);
		if (!text.lines().anyMatch("..."::equals)) {
			return text;
		}
		return text.lines().filter((line) -> !line.equals("...")).collect(Collectors.joining("\n", "", "\n"));
	}

	static String raw(String name) {
		try (InputStream in = MetricsFixtures.class.getResourceAsStream("/fixtures/vllm-metrics/" + name)) {
			if (in == null) {
				throw new IllegalArgumentException("No fixture " + name);
			}
			return new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
