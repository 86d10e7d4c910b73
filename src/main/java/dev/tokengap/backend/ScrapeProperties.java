package dev.tokengap.backend;

import java.net.URI;
import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.util.unit.DataSize;

/**
 * How tokengap scrapes the engine's own {@code /metrics} ({@code tokengap.backend.*}) to
 * explain gap spikes.
 *
 * @param enabled whether to scrape at all
 * @param scrapeInterval time between scrapes; also the resolution of spike attribution
 * @param metricsUrl the engine's metrics URL; unset = the upstream URL + {@code /metrics}
 * @param scrapeTimeout longest a scrape may take (connect to last byte); shorter than the
 * interval so scrapes never pile up
 * @param maxScrapeSize largest body read; a larger one is abandoned and counted as a
 * failed scrape
 * @param history how far back engine samples are kept; with the interval it sizes the
 * history
 */
@ConfigurationProperties("tokengap.backend")
public record ScrapeProperties(@DefaultValue("true") boolean enabled, @DefaultValue("250ms") Duration scrapeInterval,
		URI metricsUrl, @DefaultValue("200ms") Duration scrapeTimeout, @DefaultValue("4MB") DataSize maxScrapeSize,
		@DefaultValue("5m") Duration history) {

	/** The most samples a history may hold (8 primitive arrays of this length). */
	static final int MAX_HISTORY_CAPACITY = 100_000;

	public ScrapeProperties {
		requirePositive("scrape-interval", scrapeInterval);
		requirePositive("scrape-timeout", scrapeTimeout);
		requirePositive("history", history);
		if (scrapeTimeout.compareTo(scrapeInterval) >= 0) {
			throw new IllegalArgumentException("tokengap.backend.scrape-timeout (" + scrapeTimeout
					+ ") must be shorter than tokengap.backend.scrape-interval (" + scrapeInterval + ")");
		}
		if (maxScrapeSize == null || maxScrapeSize.toBytes() <= 0 || maxScrapeSize.toBytes() > Integer.MAX_VALUE) {
			throw new IllegalArgumentException(
					"tokengap.backend.max-scrape-size must be between 1B and 2GB, got " + maxScrapeSize);
		}
		if (metricsUrl != null && (metricsUrl.getHost() == null
				|| !("http".equals(metricsUrl.getScheme()) || "https".equals(metricsUrl.getScheme())))) {
			throw new IllegalArgumentException(
					"tokengap.backend.metrics-url must be an http(s):// URL with a host, got '" + metricsUrl + "'");
		}
		long capacity = history.toNanos() / scrapeInterval.toNanos();
		if (capacity < 1 || capacity > MAX_HISTORY_CAPACITY) {
			throw new IllegalArgumentException("tokengap.backend.history / scrape-interval must be between 1 and "
					+ MAX_HISTORY_CAPACITY + " samples, got " + capacity);
		}
	}

	private static void requirePositive(String name, Duration value) {
		if (value == null || value.isNegative() || value.isZero()) {
			throw new IllegalArgumentException("tokengap.backend." + name + " must be positive, got " + value);
		}
	}

	/**
	 * The defaults, bound from the {@code @DefaultValue} literals so they live in one
	 * place.
	 * @return properties as an empty environment gives them
	 */
	public static ScrapeProperties defaults() {
		Binder binder = new Binder(new MapConfigurationPropertySource());
		return binder.bindOrCreate("tokengap.backend", Bindable.of(ScrapeProperties.class));
	}

	/**
	 * The number of samples an {@link EngineHistory} needs to cover {@code history}.
	 * @return history / scrape-interval (1200 by default)
	 */
	public int historyCapacity() {
		return (int) (this.history.toNanos() / this.scrapeInterval.toNanos());
	}

	/**
	 * The URL to scrape: {@code metrics-url} when set, else the engine's
	 * {@code /metrics}.
	 * @param upstream the engine's base URL ({@code tokengap.upstream.url})
	 * @return the metrics URL
	 */
	public URI resolveMetricsUrl(URI upstream) {
		if (this.metricsUrl != null) {
			return this.metricsUrl;
		}
		String base = upstream.toString();
		return URI.create(base.endsWith("/") ? base + "metrics" : base + "/metrics");
	}

}
