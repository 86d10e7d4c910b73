package dev.tokengap.backend;

import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

class ServedModelsTests {

	/**
	 * {@code vllm serve meta-llama/Llama-3.1-8B-Instruct --served-model-name llama llama-prod
	 * --enable-lora --lora-modules sql=/adapters/sql}, as vLLM's
	 * {@code show_available_models} lists it (permissions left out).
	 */
	private static final String ALIASES_AND_LORA = """
			{"object":"list","data":[
			{"id":"llama","object":"model","created":1776930173,"owned_by":"vllm",
			 "root":"meta-llama/Llama-3.1-8B-Instruct","parent":null,"max_model_len":8192},
			{"id":"llama-prod","object":"model","created":1776930173,"owned_by":"vllm",
			 "root":"meta-llama/Llama-3.1-8B-Instruct","parent":null,"max_model_len":8192},
			{"id":"sql","object":"model","created":1776930173,"owned_by":"vllm",
			 "root":"/adapters/sql","parent":"llama","max_model_len":null}]}
			""";

	@Test
	void mapsEachServedNameToTheNameTheEngineLabelsItsSeriesWith() {
		assertThat(ServedModels.parse(ALIASES_AND_LORA.getBytes(StandardCharsets.UTF_8)))
			.containsExactly(entry("llama", "llama"), entry("llama-prod", "llama"), entry("sql", "llama"));
	}

	@Test
	void aModelWithoutRootOrParentIsItsOwnEngineName() {
		assertThat(ServedModels.parse("""
				{"object":"list","data":[{"id":"a"},{"id":"b","root":""},{"object":"model"}]}
				""".getBytes(StandardCharsets.UTF_8))).containsExactly(entry("a", "a"), entry("b", "b"));
	}

}
