package dev.tokengap.client;

import java.net.URI;
import java.time.Duration;
import java.util.List;

import io.netty.channel.ChannelOption;
import reactor.netty.http.Http11SslContextSpec;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;
import reactor.netty.resources.LoopResources;

import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.ssl.SslOptions;

/**
 * Builds tokengap's Reactor Netty HTTP clients, all with the same settings: a named
 * {@link ConnectionProvider} that publishes Reactor Netty's pool metrics
 * ({@code reactor_netty_connection_provider_*{name="..."}}) and closes idle connections
 * in the background, a connect timeout, no compression (a size cap counts the bytes
 * held), no redirects, kept-alive connections, the loops to run on, and TLS as a Spring
 * Boot SSL bundle says.
 */
public final class HttpClients {

	private HttpClients() {
	}

	/**
	 * A pool of HTTP/1.1 connections.
	 * @param name the {@code name} label of the pool's metrics
	 * @param maxConnections the most connections open at once
	 * @param pendingAcquireTimeout the longest a request waits for a connection when all
	 * are busy (there is no bound on how many wait)
	 * @param maxIdleTime connections idle longer are closed, in the background
	 * @param maxLifeTime connections older are closed, or null for no limit
	 * @return the pool
	 */
	public static ConnectionProvider pool(String name, int maxConnections, Duration pendingAcquireTimeout,
			Duration maxIdleTime, Duration maxLifeTime) {
		ConnectionProvider.Builder pool = ConnectionProvider.builder(name)
			.maxConnections(maxConnections)
			.pendingAcquireTimeout(pendingAcquireTimeout)
			.pendingAcquireMaxCount(-1)
			.maxIdleTime(maxIdleTime)
			.evictInBackground(evictionInterval(maxIdleTime))
			.metrics(true);
		return ((maxLifeTime != null) ? pool.maxLifeTime(maxLifeTime) : pool).build();
	}

	/**
	 * Idle connections are looked for a few times per max idle time, at most once a
	 * second.
	 */
	static Duration evictionInterval(Duration maxIdle) {
		Duration quarter = maxIdle.dividedBy(4);
		return (quarter.compareTo(Duration.ofSeconds(1)) < 0) ? quarter : Duration.ofSeconds(1);
	}

	/**
	 * A plain HTTP client on the pool.
	 * @param pool the connections
	 * @param loops the event loops to run the connections on, or null for Reactor Netty's
	 * own
	 * @param connectTimeout the longest wait for a TCP connection
	 * @return the client; {@link #secure} adds TLS
	 */
	public static HttpClient create(ConnectionProvider pool, LoopResources loops, Duration connectTimeout) {
		HttpClient client = HttpClient.create(pool)
			.option(ChannelOption.CONNECT_TIMEOUT_MILLIS,
					(int) Math.max(1, Math.min(Integer.MAX_VALUE, connectTimeout.toMillis())))
			.compress(false)
			.followRedirect(false)
			.keepAlive(true);
		return (loops != null) ? client.runOn(loops) : client;
	}

	/**
	 * The client over TLS, the server's host name verified.
	 * @param client a client from {@link #create}
	 * @param bundle the trust and key material, protocols and ciphers, or null for the
	 * JVM's default trust
	 * @return the client for {@code https://} URLs
	 */
	public static HttpClient secure(HttpClient client, SslBundle bundle) {
		return client.secure((spec) -> spec.sslContext(sslContext(bundle)));
	}

	private static Http11SslContextSpec sslContext(SslBundle bundle) {
		Http11SslContextSpec spec = Http11SslContextSpec.forClient();
		if (bundle == null) {
			return spec;
		}
		return spec.configure((builder) -> {
			builder.trustManager(bundle.getManagers().getTrustManagerFactory())
				.keyManager(bundle.getManagers().getKeyManagerFactory());
			SslOptions options = bundle.getOptions();
			if (options != null && options.getEnabledProtocols() != null) {
				builder.protocols(options.getEnabledProtocols());
			}
			if (options != null && options.getCiphers() != null) {
				builder.ciphers(List.of(options.getCiphers()));
			}
		});
	}

	/**
	 * A URL's scheme and authority as Reactor Netty's base URL, a one-digit port written
	 * with a leading zero: Reactor Netty (1.3.6) parses the text of a request's URL with
	 * a pattern whose port takes 2 to 5 digits, and would read {@code :9} as part of the
	 * host name; {@code 09} is the same port to it.
	 * @param url the URL
	 * @return its scheme and authority
	 */
	public static String baseUrl(URI url) {
		String authority = url.getRawAuthority();
		int port = url.getPort();
		if (port >= 0 && port < 10 && authority.endsWith(":" + port)) {
			authority = authority.substring(0, authority.length() - 1) + "0" + port;
		}
		return url.getScheme() + "://" + authority;
	}

}
