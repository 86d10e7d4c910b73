package dev.tokengap.config;

import java.net.URI;
import java.time.Duration;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;

import dev.tokengap.attribution.AttributionProperties;
import dev.tokengap.attribution.SpikeAttributor;
import dev.tokengap.attribution.SpikesEndpoint;
import dev.tokengap.backend.EngineHealth;
import dev.tokengap.backend.EngineHistory;
import dev.tokengap.backend.EngineSample;
import dev.tokengap.backend.MetricsScraper;
import dev.tokengap.backend.ScrapeListener;
import dev.tokengap.backend.ScrapeProperties;
import dev.tokengap.metrics.BackendMeters;
import dev.tokengap.metrics.TokengapMeters;
import dev.tokengap.proxy.UpstreamClient;
import dev.tokengap.timing.NanoClock;

/**
 * Wires the engine scrape (history, mirror gauges) and spike attribution.
 */
@Configuration(proxyBeanMethods = false)
@Conditional(ProxyModeCondition.class)
class AttributionConfiguration {

	private static final Log logger = LogFactory.getLog(AttributionConfiguration.class);

	/** How often the engine's /health is asked, for tokengap_engine_stuck. */
	private static final Duration HEALTH_INTERVAL = Duration.ofSeconds(2);

	@Bean
	EngineHistory engineHistory(ScrapeProperties properties) {
		return new EngineHistory(properties.historyCapacity());
	}

	@Bean
	BackendMeters backendMeters(PrometheusRegistry registry) {
		return new BackendMeters(registry);
	}

	@Bean(destroyMethod = "close")
	MetricsScraper metricsScraper(ScrapeProperties properties, UpstreamClient upstream, EngineHistory history,
			BackendMeters meters, NanoClock clock) {
		URI url = properties.resolveMetricsUrl(URI.create(upstream.base()));
		MetricsScraper scraper = new MetricsScraper(url, properties, history, clock, new ScrapeListener() {

			@Override
			public void scraped(EngineSample sample, long durationNanos) {
				meters.scraped(sample.running(), sample.waiting(), sample.swapped(), sample.kvUsage(),
						sample.preemptions(), history.engines(), durationNanos);
			}

			@Override
			public void failed(String reason, long durationNanos) {
				meters.failed(durationNanos);
				logger.debug("Scrape of " + url + " failed: " + reason);
			}

		}, upstream.sslBundle());
		if (properties.enabled()) {
			scraper.start();
		}
		return scraper;
	}

	@Bean(destroyMethod = "close")
	EngineHealth engineHealth(UpstreamClient upstream, ScrapeProperties scrape) {
		EngineHealth health = new EngineHealth(upstream.http(), upstream.base(), HEALTH_INTERVAL);
		if (scrape.enabled()) {
			health.start();
		}
		return health;
	}

	@Bean(destroyMethod = "close")
	SpikeAttributor spikeAttributor(AttributionProperties properties, EngineHistory history, TokengapMeters meters,
			NanoClock clock, ScrapeProperties scrape, EngineHealth health, BackendMeters backendMeters) {
		SpikeAttributor attributor = new SpikeAttributor(properties, history, meters, clock, scrape.scrapeInterval(),
				scrape.scrapeTimeout());
		meters.gapObserver(attributor.detector());
		if (scrape.enabled()) {
			attributor.watchForStuckEngine(health::healthy, backendMeters::engineStuck);
		}
		return attributor;
	}

	@Bean
	SpikesEndpoint spikesEndpoint(SpikeAttributor attributor) {
		return new SpikesEndpoint(attributor);
	}

}
