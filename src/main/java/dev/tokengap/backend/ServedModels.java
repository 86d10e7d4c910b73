package dev.tokengap.backend;

import java.net.URI;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Keeps the list of models the engine serves ({@code GET /v1/models}) fresh, so that only
 * real model names become metric labels, each with the name the engine labels its own
 * series with.
 *
 * <p>
 * vLLM labels its series with its first served name. A LoRA adapter's card names that as
 * its {@code parent}; the further names of {@code --served-model-name a b} are cards of
 * their own that share the first one's {@code root} (the model path).
 */
public final class ServedModels implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(ServedModels.class);

	private static final JsonMapper JSON = JsonMapper.builder().build();

	private static final long MIN_REFRESH_NANOS = Duration.ofSeconds(5).toNanos();

	private final HttpClient client;

	private final URI url;

	private final Duration interval;

	private final Consumer<Map<String, String>> listener;

	private final AtomicLong lastRefresh = new AtomicLong(System.nanoTime() - MIN_REFRESH_NANOS);

	private volatile Disposable schedule;

	/**
	 * Creates the refresher; call {@link #start()} to begin.
	 * @param client the engine's client, as the proxy reaches it (its pool, TLS and
	 * timeouts)
	 * @param base the engine's base URL
	 * @param interval how often to refresh
	 * @param listener receives each successfully read list: served id to the engine's
	 * name for it, in the engine's order
	 */
	public ServedModels(HttpClient client, String base, Duration interval, Consumer<Map<String, String>> listener) {
		this.url = URI.create(base + "/v1/models");
		this.interval = interval;
		this.listener = listener;
		this.client = client.responseTimeout(Duration.ofSeconds(5));
	}

	/** Reads the list now and then every interval. */
	public void start() {
		this.schedule = Flux.interval(Duration.ZERO, this.interval)
			.onBackpressureDrop()
			.concatMap((tick) -> fetch())
			.subscribe(this.listener);
	}

	/**
	 * Reads the list again soon (at most every 5 s), e.g. when a request names an unknown
	 * model.
	 */
	public void refreshSoon() {
		long now = System.nanoTime();
		long last = this.lastRefresh.get();
		if (now - last >= MIN_REFRESH_NANOS && this.lastRefresh.compareAndSet(last, now)) {
			fetch().subscribe(this.listener);
		}
	}

	Mono<Map<String, String>> fetch() {
		return this.client.get()
			.uri(this.url)
			.responseSingle((response, body) -> (response.status().code() == 200) ? body.asByteArray()
					: Mono.error(new IllegalStateException("HTTP " + response.status().code())))
			.map(ServedModels::parse)
			.doOnError((ex) -> logger.debug("Could not read " + this.url + ": " + ex))
			.onErrorResume((ex) -> Mono.empty());
	}

	static Map<String, String> parse(byte[] body) {
		Map<String, String> names = new LinkedHashMap<>();
		Map<String, String> firstByRoot = new LinkedHashMap<>();
		for (JsonNode model : JSON.readTree(body).path("data")) {
			String id = text(model.path("id"));
			if (id != null) {
				String parent = text(model.path("parent"));
				String root = text(model.path("root"));
				String first = (root != null) ? firstByRoot.computeIfAbsent(root, (r) -> id) : id;
				names.putIfAbsent(id, (parent != null) ? parent : first);
			}
		}
		return names;
	}

	private static String text(JsonNode node) {
		String value = node.isString() ? node.stringValue() : null;
		return (value == null || value.isEmpty()) ? null : value;
	}

	@Override
	public void close() {
		Disposable s = this.schedule;
		if (s != null) {
			try {
				s.dispose();
			}
			catch (RejectedExecutionException ex) {
				// At shutdown the event loops may already be gone; nothing is left to
				// cancel.
			}
		}
	}

}
