package dev.tokengap.deploy;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import dev.tokengap.testsupport.StreamingClient;

/**
 * Prometheus's HTTP API: instant queries, series lookups (what Grafana's
 * {@code label_values} does) and the loaded rules.
 */
final class PrometheusApi {

	private static final JsonMapper JSON = JsonMapper.builder().build();

	private final String baseUrl;

	PrometheusApi(String baseUrl) {
		this.baseUrl = baseUrl;
	}

	/**
	 * The outcome of one instant query: an error, or how many samples are numbers (not
	 * NaN).
	 */
	record Result(String error, int samples, int nanSamples) {

		boolean hasData() {
			return this.error == null && this.samples > 0;
		}

	}

	Result query(String expr) {
		JsonNode body = get("/api/v1/query?query=" + encode(expr));
		if (!"success".equals(body.path("status").asString())) {
			return new Result(body.path("errorType").asString() + ": " + body.path("error").asString(), 0, 0);
		}
		JsonNode data = body.path("data");
		List<JsonNode> values = new ArrayList<>();
		if ("scalar".equals(data.path("resultType").asString())) {
			values.add(data.path("result"));
		}
		else {
			data.path("result").forEach((series) -> values.add(series.path("value")));
		}
		int samples = 0;
		int nan = 0;
		for (JsonNode value : values) {
			String number = value.path(1).asString();
			if ("NaN".equals(number)) {
				nan++;
			}
			else {
				samples++;
			}
		}
		return new Result(null, samples, nan);
	}

	/**
	 * An instant query's sample values as Prometheus writes them ("0.25", "NaN"), one per
	 * series; an error as an IllegalStateException.
	 */
	List<String> values(String expr) {
		JsonNode body = get("/api/v1/query?query=" + encode(expr));
		if (!"success".equals(body.path("status").asString())) {
			throw new IllegalStateException(body.path("errorType").asString() + ": " + body.path("error").asString());
		}
		List<String> values = new ArrayList<>();
		body.path("data").path("result").forEach((series) -> values.add(series.path("value").path(1).asString()));
		return values;
	}

	double scalar(String expr) {
		JsonNode result = get("/api/v1/query?query=" + encode(expr)).path("data").path("result");
		return (result.size() == 0) ? Double.NaN : Double.parseDouble(result.path(0).path("value").path(1).asString());
	}

	/**
	 * {@code label_values(selector, label)}: the label's values on the series the
	 * selector matches.
	 */
	Set<String> labelValues(String selector, String label) {
		JsonNode body = get("/api/v1/series?match[]=" + encode(selector));
		Set<String> values = new TreeSet<>();
		body.path("data").forEach((series) -> {
			if (series.has(label)) {
				values.add(series.path(label).asString());
			}
		});
		return values;
	}

	/**
	 * The alerting rules Prometheus loaded: name -> health ("ok" once evaluated without
	 * error).
	 */
	java.util.Map<String, String> alertingRules() {
		return rules("alert");
	}

	/** Recording rules by recorded name: "ok", or the health and last error. */
	java.util.Map<String, String> recordingRules() {
		return rules("record");
	}

	private java.util.Map<String, String> rules(String type) {
		java.util.Map<String, String> rules = new java.util.LinkedHashMap<>();
		for (JsonNode group : get("/api/v1/rules?type=" + type).path("data").path("groups")) {
			for (JsonNode rule : group.path("rules")) {
				rules.put(rule.path("name").asString(),
						rule.path("health").asString()
								+ (rule.has("lastError") && !rule.path("lastError").asString().isEmpty()
										? " (" + rule.path("lastError").asString() + ")" : ""));
			}
		}
		return rules;
	}

	private JsonNode get(String path) {
		StreamingClient.Exchange response = StreamingClient.at(this.baseUrl, Duration.ofSeconds(30)).get(path);
		if (response.status() < 0) {
			throw new IllegalStateException(path + " got no response", response.error());
		}
		return JSON.readTree(response.body());
	}

	private static String encode(String text) {
		return URLEncoder.encode(text, StandardCharsets.UTF_8);
	}

}
