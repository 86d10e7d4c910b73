package dev.tokengap.metrics;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.DoubleSupplier;

import io.prometheus.metrics.core.datapoints.DistributionDataPoint;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.core.metrics.Info;
import io.prometheus.metrics.model.registry.PrometheusRegistry;

/**
 * The engine state mirror: the last scraped values of the engine's own gauges, and the
 * health of the scrape. A quantity the engine does not export (swapped, on V1 engines) is
 * absent, not 0.
 */
public final class BackendMeters {

	public static final String RUNNING = "tokengap_backend_requests_running";

	public static final String WAITING = "tokengap_backend_requests_waiting";

	public static final String SWAPPED = "tokengap_backend_requests_swapped";

	public static final String KV_CACHE_USAGE = "tokengap_backend_kv_cache_usage_ratio";

	public static final String PREEMPTIONS = "tokengap_backend_preemptions_total";

	public static final String UP = "tokengap_backend_up";

	public static final String ENGINE_STUCK = "tokengap_engine_stuck";

	public static final String ENGINES = "tokengap_backend_engines";

	public static final String MODEL_INFO = "tokengap_model_info";

	public static final String SCRAPE_DURATION = "tokengap_backend_scrape_duration_seconds";

	public static final String SCRAPE_ERRORS = "tokengap_backend_scrape_errors_total";

	static final double[] SCRAPE_EDGES = { 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0 };

	private final DistributionDataPoint duration;

	private final Counter errors;

	private volatile double running = Double.NaN;

	private volatile double waiting = Double.NaN;

	private volatile double swapped = Double.NaN;

	private volatile double kvUsage = Double.NaN;

	private volatile double preemptions = Double.NaN;

	private volatile boolean up;

	private volatile boolean stuck;

	private volatile double engines = Double.NaN;

	private final Info modelInfo;

	// Guarded by modelInfo: what it holds now, to remove what the engine no longer lists.
	private Map<String, String> models = Map.of();

	/**
	 * Registers the mirror's series.
	 * @param registry the registry {@code /actuator/prometheus} exposes
	 */
	public BackendMeters(PrometheusRegistry registry) {
		gauge(registry, RUNNING, "Engine requests running (vllm:num_requests_running), last scrape",
				() -> this.running);
		gauge(registry, WAITING, "Engine requests waiting (vllm:num_requests_waiting), last scrape",
				() -> this.waiting);
		gauge(registry, SWAPPED, "Engine requests swapped (vllm:num_requests_swapped, V0 engines), last scrape",
				() -> this.swapped);
		gauge(registry, KV_CACHE_USAGE, "Engine KV-cache usage 0..1 (vllm:kv_cache_usage_perc), last scrape",
				() -> this.kvUsage);
		gauge(registry, UP, "1 when the last scrape of the engine's /metrics succeeded", () -> this.up ? 1 : 0);
		gauge(registry, ENGINE_STUCK,
				"1 while the engine has requests running or waiting, answers its health check, and no stream has "
						+ "received content for tokengap.attribution.stuck-after",
				() -> this.stuck ? 1 : 0);
		gauge(registry, ENGINES, "Distinct engines seen behind the scraped metrics URL within the history window "
				+ "(more than 1: a pool, attribution says unknown)", () -> this.engines);
		CounterWithCallback.builder()
			.name(PREEMPTIONS)
			.help("Engine preemptions (vllm:num_preemptions_total), last scrape")
			.callback((callback) -> {
				double value = this.preemptions;
				if (!Double.isNaN(value)) {
					callback.call(value);
				}
			})
			.register(registry);
		this.modelInfo = Info.builder()
			.name(MODEL_INFO)
			.help("1 for each model the engine serves (model_name, tokengap's label) with the name the engine labels "
					+ "its own series with (engine_model_name): an alias's first served name, a LoRA adapter's base")
			.labelNames("model_name", "engine_model_name")
			.register(registry);
		this.duration = Histogram.builder()
			.name(SCRAPE_DURATION)
			.help("Time per scrape of the engine's /metrics")
			.classicUpperBounds(SCRAPE_EDGES)
			.classicOnly()
			.withoutExemplars()
			.register(registry);
		this.errors = Counter.builder()
			.name(SCRAPE_ERRORS)
			.help("Failed scrapes of the engine's /metrics")
			.withoutExemplars()
			.register(registry);
	}

	private static void gauge(PrometheusRegistry registry, String name, String help, DoubleSupplier value) {
		GaugeWithCallback.builder().name(name).help(help).callback((callback) -> {
			double v = value.getAsDouble();
			if (!Double.isNaN(v)) {
				callback.call(v);
			}
		}).register(registry);
	}

	/**
	 * Records a successful scrape.
	 * @param running requests running
	 * @param waiting requests waiting
	 * @param swapped requests swapped, NaN when not exported
	 * @param kvUsage KV usage 0..1
	 * @param preemptions preemptions counter, rebased across restarts and engines
	 * @param engines distinct engines seen behind the URL within the history window
	 * @param durationNanos scrape time
	 */
	public void scraped(double running, double waiting, double swapped, double kvUsage, double preemptions, int engines,
			long durationNanos) {
		this.engines = engines;
		this.running = running;
		this.waiting = waiting;
		this.swapped = swapped;
		this.kvUsage = kvUsage;
		this.preemptions = preemptions;
		this.up = true;
		this.duration.observe(durationNanos / 1e9);
	}

	/**
	 * Replaces the models of {@code tokengap_model_info}: the first {@code max} the
	 * engine lists, the cap of {@code model_name} values, since the engine's list is not
	 * bounded either.
	 * @param served served id to the engine's name for it, in the engine's order
	 * @param max most models exported
	 */
	public void servedModels(Map<String, String> served, int max) {
		Map<String, String> kept = new LinkedHashMap<>();
		for (Map.Entry<String, String> model : served.entrySet()) {
			if (kept.size() >= max) {
				break;
			}
			kept.put(model.getKey(), model.getValue());
		}
		synchronized (this.modelInfo) {
			this.models.forEach((name, engine) -> {
				if (!engine.equals(kept.get(name))) {
					this.modelInfo.remove(name, engine);
				}
			});
			kept.forEach((name, engine) -> {
				if (!engine.equals(this.models.get(name))) {
					this.modelInfo.addLabelValues(name, engine);
				}
			});
			this.models = kept;
		}
	}

	/**
	 * Records whether the engine is stuck.
	 * @param stuck whether it holds requests, answers its health check and produced no
	 * content for {@code tokengap.attribution.stuck-after}
	 */
	public void engineStuck(boolean stuck) {
		this.stuck = stuck;
	}

	/**
	 * Records a failed scrape; the mirrored gauges keep their last values, {@code up}
	 * drops to 0.
	 * @param durationNanos time until the failure
	 */
	public void failed(long durationNanos) {
		this.up = false;
		this.errors.inc();
		this.duration.observe(durationNanos / 1e9);
	}

}
