package dev.tokengap.proxy;

import java.net.URI;
import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Where and how tokengap reaches the engine ({@code tokengap.upstream.*}).
 *
 * @param url the engine's base URL, e.g. {@code http://127.0.0.1:8000}; required unless
 * {@code tokengap.mode=demo}. An empty port ({@code http://127.0.0.1:}: what the downward
 * API makes of a pod without the {@code tokengap.dev/engine-port} annotation) means
 * vLLM's default, 8000
 * @param responseTimeout longest wait for the response headers (504 after it)
 * @param idleTimeout longest silence between two response chunks once streaming (the
 * stream then fails with outcome {@code upstream_timeout}); never a total deadline
 * @param connectTimeout longest wait for a TCP connection
 * @param maxConnections most pooled connections to the engine, split evenly across the
 * event loops
 * @param maxIdleTime pooled connections idle longer are closed; keep it below the
 * engine's keep-alive (uvicorn in vLLM: 5s) so a request never lands on a connection
 * being closed
 * @param pendingAcquireTimeout longest a request waits for a pooled engine connection
 * when all {@code max-connections} are busy; it is then answered 503 (outcome
 * {@code rejected})
 * @param maxLifeTime pooled connections older than this are closed once idle, so that a
 * long-lived sidecar spreads over an engine's restarted or rescheduled replicas
 * @param sslBundle the name of a {@code spring.ssl.bundle.*} bundle that trusts the
 * engine's certificate (and holds the client's own, for mutual TLS), for an
 * {@code https://} URL; unset = the JVM's default trust store
 */
@ConfigurationProperties("tokengap.upstream")
public record UpstreamProperties(URI url, @DefaultValue("10m") Duration responseTimeout,
		@DefaultValue("5m") Duration idleTimeout, @DefaultValue("5s") Duration connectTimeout,
		@DefaultValue("2048") int maxConnections, @DefaultValue("4s") Duration maxIdleTime,
		@DefaultValue("5s") Duration pendingAcquireTimeout, @DefaultValue("10m") Duration maxLifeTime,
		String sslBundle) {

	/** vLLM's default port ({@code vllm serve --port}). */
	public static final int DEFAULT_ENGINE_PORT = 8000;

	public UpstreamProperties {
		url = withDefaultPort(url);
		requirePositive("response-timeout", responseTimeout);
		requirePositive("idle-timeout", idleTimeout);
		requirePositive("connect-timeout", connectTimeout);
		requirePositive("max-idle-time", maxIdleTime);
		requirePositive("pending-acquire-timeout", pendingAcquireTimeout);
		requirePositive("max-life-time", maxLifeTime);
		if (maxConnections < 1) {
			throw new IllegalArgumentException(
					"tokengap.upstream.max-connections must be at least 1, got " + maxConnections);
		}
		if (url != null && (url.getHost() == null || !("http".equals(url.getScheme()) || secure(url)))) {
			throw new IllegalArgumentException(
					"tokengap.upstream.url must be an http:// or https:// URL with a host, got '" + url + "'");
		}
		if (sslBundle != null && sslBundle.isBlank()) {
			sslBundle = null;
		}
		if (sslBundle != null && url != null && !secure(url)) {
			throw new IllegalArgumentException("tokengap.upstream.ssl-bundle=" + sslBundle
					+ " is set, but tokengap.upstream.url is not an https:// URL: '" + url + "'");
		}
	}

	/**
	 * Whether the engine is reached over TLS.
	 * @return true for an {@code https://} URL
	 */
	public boolean secure() {
		return this.url != null && secure(this.url);
	}

	private static boolean secure(URI url) {
		return "https".equals(url.getScheme());
	}

	/**
	 * An authority that ends with an empty port ({@code host:}) gets vLLM's default port.
	 */
	private static URI withDefaultPort(URI url) {
		String authority = (url != null) ? url.getRawAuthority() : null;
		if (authority == null || !authority.endsWith(":") || url.getPort() != -1) {
			return url;
		}
		String rest = url.toString().substring(url.getScheme().length() + 3 + authority.length());
		return URI.create(url.getScheme() + "://" + authority + DEFAULT_ENGINE_PORT + rest);
	}

	private static void requirePositive(String name, Duration value) {
		if (value == null || value.isNegative() || value.isZero()) {
			throw new IllegalArgumentException("tokengap.upstream." + name + " must be positive, got " + value);
		}
	}

	/**
	 * Returns a copy pointing at another URL (the demo's in-process simulator).
	 * @param other the URL
	 * @return the copy
	 */
	public UpstreamProperties withUrl(URI other) {
		return new UpstreamProperties(other, this.responseTimeout, this.idleTimeout, this.connectTimeout,
				this.maxConnections, this.maxIdleTime, this.pendingAcquireTimeout, this.maxLifeTime, this.sslBundle);
	}

}
