package dev.tokengap.backend;

import java.net.URI;
import java.time.Duration;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;

/**
 * Asks the engine's {@code /health} every interval: vLLM answers 200 while its engine
 * loop is alive and 503 once it is dead, but keeps answering 200 while an engine that
 * stopped scheduling holds its requests. That 200 beside requests that receive nothing is
 * what {@code tokengap_engine_stuck} looks for.
 */
public final class EngineHealth implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(EngineHealth.class);

	private final HttpClient client;

	private final URI url;

	private final Duration interval;

	private volatile boolean healthy;

	private volatile Disposable schedule;

	/**
	 * Creates the check; call {@link #start()} to begin.
	 * @param client the engine's client, as the proxy reaches it (its pool and TLS)
	 * @param base the engine's base URL
	 * @param interval how often to ask, also the longest an answer may take
	 */
	public EngineHealth(HttpClient client, String base, Duration interval) {
		this.url = URI.create(base + "/health");
		this.interval = interval;
		this.client = client.responseTimeout(interval);
	}

	/** Asks now and then every interval. */
	public void start() {
		this.schedule = Flux.interval(Duration.ZERO, this.interval)
			.onBackpressureDrop()
			.concatMap((tick) -> check())
			.subscribe((ok) -> this.healthy = ok);
	}

	Mono<Boolean> check() {
		return this.client.get()
			.uri(this.url)
			.responseSingle((response, body) -> body.then(Mono.just(response.status().code() == 200)))
			.defaultIfEmpty(false)
			.doOnError((ex) -> logger.debug("Could not read " + this.url + ": " + ex))
			.onErrorReturn(false);
	}

	/**
	 * Whether the engine's last answer was 200.
	 * @return false before the first answer, and after a failed or non-200 one
	 */
	public boolean healthy() {
		return this.healthy;
	}

	@Override
	public void close() {
		Disposable schedule = this.schedule;
		if (schedule != null) {
			schedule.dispose();
		}
	}

}
