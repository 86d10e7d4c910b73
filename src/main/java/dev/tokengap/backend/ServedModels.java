package dev.tokengap.backend;

import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.Set;
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
 * Keeps the list of models the engine serves ({@code GET /v1/models}) fresh, so that only real
 * model names become metric labels.
 */
public final class ServedModels implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(ServedModels.class);

	private static final JsonMapper JSON = JsonMapper.builder().build();

	private static final long MIN_REFRESH_NANOS = Duration.ofSeconds(5).toNanos();

	private final HttpClient client;

	private final String url;

	private final Duration interval;

	private final Consumer<Set<String>> listener;

	private final AtomicLong lastRefresh = new AtomicLong(System.nanoTime() - MIN_REFRESH_NANOS);

	private volatile Disposable schedule;

	/**
	 * Creates the refresher; call {@link #start()} to begin.
	 * @param base the engine's base URL
	 * @param interval how often to refresh
	 * @param listener receives each successfully read list
	 */
	public ServedModels(String base, Duration interval, Consumer<Set<String>> listener) {
		this.url = base + "/v1/models";
		this.interval = interval;
		this.listener = listener;
		this.client = HttpClient.create().responseTimeout(Duration.ofSeconds(5));
	}

	/** Reads the list now and then every interval. */
	public void start() {
		this.schedule = Flux.interval(Duration.ZERO, this.interval)
			.onBackpressureDrop()
			.concatMap((tick) -> fetch())
			.subscribe(this.listener);
	}

	/** Reads the list again soon (at most every 5 s), e.g. when a request names an unknown model. */
	public void refreshSoon() {
		long now = System.nanoTime();
		long last = this.lastRefresh.get();
		if (now - last >= MIN_REFRESH_NANOS && this.lastRefresh.compareAndSet(last, now)) {
			fetch().subscribe(this.listener);
		}
	}

	Mono<Set<String>> fetch() {
		return this.client.get()
			.uri(this.url)
			.responseSingle((response, body) -> (response.status().code() == 200) ? body.asByteArray()
					: Mono.error(new IllegalStateException("HTTP " + response.status().code())))
			.map(ServedModels::parse)
			.doOnError((ex) -> logger.debug("Could not read " + this.url + ": " + ex))
			.onErrorResume((ex) -> Mono.empty());
	}

	static Set<String> parse(byte[] body) {
		Set<String> ids = new LinkedHashSet<>();
		for (JsonNode model : JSON.readTree(body).path("data")) {
			String id = model.path("id").asString(null);
			if (id != null) {
				ids.add(id);
			}
		}
		return ids;
	}

	@Override
	public void close() {
		Disposable s = this.schedule;
		if (s != null) {
			try {
				s.dispose();
			}
			catch (java.util.concurrent.RejectedExecutionException ex) {
				// At shutdown the event loops may already be gone; nothing is left to cancel.
			}
		}
	}

}
