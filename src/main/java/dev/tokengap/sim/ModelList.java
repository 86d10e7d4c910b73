package dev.tokengap.sim;

/**
 * The body of vLLM's {@code GET /v1/models} for the one served model.
 */
final class ModelList {

	private ModelList() {
	}

	static String json(SimulatorProperties properties) {
		String model = OpenAiJson.quote(properties.model());
		long created = System.currentTimeMillis() / 1000;
		return "{\"object\":\"list\",\"data\":[{\"id\":" + model + ",\"object\":\"model\",\"created\":" + created
				+ ",\"owned_by\":\"vllm\",\"root\":" + model + ",\"parent\":null,\"max_model_len\":"
				+ properties.maxModelLen()
				+ ",\"permission\":[{\"id\":\"modelperm-sim\",\"object\":\"model_permission\"," + "\"created\":"
				+ created + ",\"allow_create_engine\":false,\"allow_sampling\":true,"
				+ "\"allow_logprobs\":true,\"allow_search_indices\":false,\"allow_view\":true,"
				+ "\"allow_fine_tuning\":false,\"organization\":\"*\",\"group\":null,\"is_blocking\":false}]}]}";
	}

}
