package dev.tokengap.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A team's own prompts, one JSON object a line: {@code {"prompt": "..."}}, or a
 * ShareGPT-style {@code {"conversations": [{"from": "human", "value": "..."}, ...]}}
 * whose first human (or {@code user}) turn is the prompt. Blank lines are skipped; a line
 * that is neither is a usage error naming the line.
 */
final class PromptDataset {

	private final Path file;

	private final List<String> prompts;

	private PromptDataset(Path file, List<String> prompts) {
		this.file = file;
		this.prompts = prompts;
	}

	/** Reads a dataset; null without one. */
	static PromptDataset load(Path file) {
		if (file == null) {
			return null;
		}
		List<String> lines;
		try {
			lines = Files.readAllLines(file);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("could not read --dataset " + file, ex);
		}
		JsonMapper json = JsonMapper.builder().build();
		List<String> prompts = new ArrayList<>(lines.size());
		for (int i = 0; i < lines.size(); i++) {
			if (!lines.get(i).isBlank()) {
				prompts.add(prompt(json, lines.get(i), file, i + 1));
			}
		}
		if (prompts.isEmpty()) {
			throw new IllegalArgumentException("--dataset " + file + " holds no prompt");
		}
		return new PromptDataset(file, List.copyOf(prompts));
	}

	private static String prompt(JsonMapper json, String line, Path file, int number) {
		JsonNode node;
		try {
			node = json.readTree(line);
		}
		catch (JacksonException ex) {
			throw new IllegalArgumentException(file + ":" + number + " is not JSON: " + ex.getOriginalMessage());
		}
		if (node.path("prompt").isString()) {
			return node.get("prompt").asString();
		}
		for (JsonNode turn : node.path("conversations")) {
			String from = turn.path("from").asString(turn.path("role").asString(""));
			JsonNode value = turn.has("value") ? turn.get("value") : turn.path("content");
			if (("human".equals(from) || "user".equals(from)) && value.isString()) {
				return value.asString();
			}
		}
		throw new IllegalArgumentException(
				file + ":" + number + " has neither a \"prompt\" nor a human turn in \"conversations\"");
	}

	int size() {
		return this.prompts.size();
	}

	/** Prompt {@code i}, wrapping around at the end. */
	String prompt(int i) {
		return this.prompts.get(i % this.prompts.size());
	}

	Path file() {
		return this.file;
	}

	/**
	 * A prompt's length in tokens, estimated as one per four characters (the simulator's
	 * estimate, and about right for English with common tokenizers).
	 */
	static int estimateTokens(String prompt) {
		return Math.max(1, (prompt.length() + 3) / 4);
	}

}
