package dev.tokengap.bench;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import dev.tokengap.backend.PrometheusTextParser;
import dev.tokengap.backend.PrometheusTextParser.Sample;

/**
 * What the engine did during the measured window, from its {@code /metrics}: a scrape
 * before and after gives every counter's change (every {@code *_total} series), the
 * {@code *_info} series its configuration, and a scrape once a second between them
 * samples KV-cache usage and the waiting queue. Its version comes from vLLM's
 * {@code GET /version} beside the metrics.
 */
final class EngineRecorder {

	static final Duration SAMPLE_EVERY = Duration.ofSeconds(1);

	private static final String KV_USAGE = "vllm:kv_cache_usage_perc";

	/** vLLM's KV usage gauge before v1. */
	private static final String OLD_KV_USAGE = "vllm:gpu_cache_usage_perc";

	private static final String WAITING = "vllm:num_requests_waiting";

	private static final String RUNNING = "vllm:num_requests_running";

	private final HttpClient http = BenchClients.SMALL.responseTimeout(Duration.ofSeconds(5));

	private final URI url;

	private final List<double[]> gauges = Collections.synchronizedList(new ArrayList<>());

	private List<Sample> before = List.of();

	private Disposable sampler;

	private String version;

	EngineRecorder(URI url) {
		this.url = url;
	}

	/** Scrapes the counters' starting point and starts sampling the gauges. */
	void start() {
		this.version = version();
		this.before = scrape().onErrorResume((ex) -> Mono.just(List.of())).block(Duration.ofSeconds(15));
		this.sampler = Flux.interval(Duration.ZERO, SAMPLE_EVERY)
			.onBackpressureDrop()
			.concatMap((tick) -> scrape().onErrorResume((ex) -> Mono.empty()), 1)
			.subscribe((samples) -> this.gauges.add(gauges(samples)));
	}

	/** Stops sampling, scrapes again and describes the window. */
	Map<String, Object> stop() {
		this.sampler.dispose();
		List<Sample> after = scrape().onErrorResume((ex) -> Mono.just(List.of())).block(Duration.ofSeconds(15));
		this.gauges.add(gauges(after));
		Map<String, Double> deltas = deltas(this.before, after);
		Map<String, Object> json = new LinkedHashMap<>();
		json.put("metrics_url", this.url.toString());
		json.put("version", this.version);
		json.put("info", info(after));
		json.put("preemptions", sum(deltas, "vllm:num_preemptions_total"));
		json.put("prompt_tokens", sum(deltas, "vllm:prompt_tokens_total"));
		json.put("generation_tokens", sum(deltas, "vllm:generation_tokens_total"));
		json.put("finished_requests", finished(this.before, after));
		json.put("kv_cache_usage", series(0));
		json.put("num_requests_waiting", series(1));
		json.put("num_requests_running", series(2));
		json.put("spec_decode", specDecode(deltas));
		json.put("counters", deltas);
		return json;
	}

	private Mono<List<Sample>> scrape() {
		return this.http.get()
			.uri(this.url)
			.responseSingle((response, body) -> (response.status().code() == 200) ? body.asString()
					: Mono.error(new IllegalStateException("HTTP " + response.status().code())))
			.map((text) -> new PrometheusTextParser().parse(text));
	}

	private String version() {
		try {
			String body = this.http.get()
				.uri(this.url.resolve("/version"))
				.responseSingle(
						(response, content) -> (response.status().code() == 200) ? content.asString() : Mono.empty())
				.block(Duration.ofSeconds(5));
			JsonNode node = JsonMapper.builder().build().readTree((body != null) ? body : "{}");
			return node.path("version").isString() ? node.get("version").asString() : null;
		}
		catch (RuntimeException ex) {
			return null;
		}
	}

	/** KV usage, waiting and running, each summed over the engine's series. */
	private static double[] gauges(List<Sample> samples) {
		double[] values = { Double.NaN, Double.NaN, Double.NaN };
		for (Sample sample : samples) {
			int slot = switch (sample.name()) {
				case KV_USAGE, OLD_KV_USAGE -> 0;
				case WAITING -> 1;
				case RUNNING -> 2;
				default -> -1;
			};
			if (slot >= 0) {
				values[slot] = (Double.isNaN(values[slot]) ? 0 : values[slot]) + sample.value();
			}
		}
		return values;
	}

	private Map<String, Object> series(int slot) {
		List<Double> values = new ArrayList<>();
		synchronized (this.gauges) {
			this.gauges.stream().mapToDouble((g) -> g[slot]).filter((v) -> !Double.isNaN(v)).forEach(values::add);
		}
		if (values.isEmpty()) {
			return null;
		}
		Map<String, Object> json = new LinkedHashMap<>();
		json.put("max", values.stream().mapToDouble(Double::doubleValue).max().orElseThrow());
		json.put("mean", values.stream().mapToDouble(Double::doubleValue).average().orElseThrow());
		json.put("samples", values);
		return json;
	}

	private static Map<String, Map<String, String>> info(List<Sample> samples) {
		Map<String, Map<String, String>> info = new TreeMap<>();
		for (Sample sample : samples) {
			if (sample.name().endsWith("_info")) {
				info.put(key(sample), new TreeMap<>(sample.labels()));
			}
		}
		return info;
	}

	/** Each counter series' change; a reset (a restart) counts from zero. */
	private static Map<String, Double> deltas(List<Sample> before, List<Sample> after) {
		Map<String, Double> start = new TreeMap<>();
		before.stream().filter((s) -> s.name().endsWith("_total")).forEach((s) -> start.put(key(s), s.value()));
		Map<String, Double> deltas = new TreeMap<>();
		for (Sample sample : after) {
			if (sample.name().endsWith("_total")) {
				double earlier = start.getOrDefault(key(sample), 0.0);
				deltas.put(key(sample), (earlier <= sample.value()) ? sample.value() - earlier : sample.value());
			}
		}
		return deltas;
	}

	private static Map<String, Double> finished(List<Sample> before, List<Sample> after) {
		Map<String, Double> deltas = deltas(before, after);
		Map<String, Double> byReason = new TreeMap<>();
		for (Sample sample : after) {
			if ("vllm:request_success_total".equals(sample.name())) {
				byReason.merge(String.valueOf(sample.label("finished_reason")), deltas.get(key(sample)), Double::sum);
			}
		}
		return byReason;
	}

	private static Double sum(Map<String, Double> deltas, String name) {
		Double total = null;
		for (Map.Entry<String, Double> delta : deltas.entrySet()) {
			if (delta.getKey().equals(name) || delta.getKey().startsWith(name + "{")) {
				total = ((total != null) ? total : 0) + delta.getValue();
			}
		}
		return total;
	}

	private static Map<String, Object> specDecode(Map<String, Double> deltas) {
		Double drafted = sum(deltas, "vllm:spec_decode_num_draft_tokens_total");
		Double accepted = sum(deltas, "vllm:spec_decode_num_accepted_tokens_total");
		if (drafted == null || accepted == null) {
			return null;
		}
		Map<String, Object> json = new LinkedHashMap<>();
		json.put("draft_tokens", drafted);
		json.put("accepted_tokens", accepted);
		json.put("acceptance_rate", (drafted > 0) ? accepted / drafted : null);
		return json;
	}

	/** {@code name{a="x",b="y"}}, labels sorted. */
	private static String key(Sample sample) {
		if (sample.labels().isEmpty()) {
			return sample.name();
		}
		StringBuilder key = new StringBuilder(sample.name()).append('{');
		new TreeMap<>(sample.labels())
			.forEach((name, value) -> key.append(name).append("=\"").append(value).append("\","));
		key.setLength(key.length() - 1);
		return key.append('}').toString();
	}

}
