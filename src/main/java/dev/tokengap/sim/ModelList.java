package dev.tokengap.sim;

import java.util.ArrayList;
import java.util.List;

/**
 * The body of vLLM's {@code GET /v1/models}: one card per served name (aliases share the
 * model's {@code root}), then one per LoRA adapter ({@code root} its path, {@code parent}
 * the first served name), as vLLM's {@code OpenAIServingModels.show_available_models}
 * writes them.
 */
final class ModelList {

	private ModelList() {
	}

	static String json(SimulatorProperties properties) {
		long created = System.currentTimeMillis() / 1000;
		String root = OpenAiJson.quote(properties.model());
		List<String> cards = new ArrayList<>();
		List<String> names = new ArrayList<>();
		names.add(properties.model());
		names.addAll(properties.aliases());
		for (String name : names) {
			cards.add(card(OpenAiJson.quote(name), root, "null", properties.maxModelLen(), created));
		}
		for (String adapter : properties.loraAdapters()) {
			cards.add(card(OpenAiJson.quote(adapter), OpenAiJson.quote("/adapters/" + adapter), root,
					properties.maxModelLen(), created));
		}
		return "{\"object\":\"list\",\"data\":[" + String.join(",", cards) + "]}";
	}

	private static String card(String id, String root, String parent, int maxModelLen, long created) {
		return "{\"id\":" + id + ",\"object\":\"model\",\"created\":" + created + ",\"owned_by\":\"vllm\",\"root\":"
				+ root + ",\"parent\":" + parent + ",\"max_model_len\":" + maxModelLen
				+ ",\"permission\":[{\"id\":\"modelperm-sim\",\"object\":\"model_permission\"," + "\"created\":"
				+ created + ",\"allow_create_engine\":false,\"allow_sampling\":true,"
				+ "\"allow_logprobs\":true,\"allow_search_indices\":false,\"allow_view\":true,"
				+ "\"allow_fine_tuning\":false,\"organization\":\"*\",\"group\":null,\"is_blocking\":false}]}";
	}

}
