package dev.tokengap.backend;

import java.net.URI;
import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.util.unit.DataSize;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class ScrapePropertiesTests {

	@Test
	void defaultsToFourScrapesASecondWithFiveMinutesOfHistory() {
		ScrapeProperties properties = ScrapeProperties.defaults();
		assertThat(properties.enabled()).isTrue();
		assertThat(properties.scrapeInterval()).isEqualTo(Duration.ofMillis(250));
		assertThat(properties.metricsUrl()).isNull();
		assertThat(properties.scrapeTimeout()).isEqualTo(Duration.ofMillis(200));
		assertThat(properties.maxScrapeSize()).isEqualTo(DataSize.ofMegabytes(4));
		assertThat(properties.history()).isEqualTo(Duration.ofMinutes(5));
		assertThat(properties.historyCapacity()).isEqualTo(1200);
	}

	@Test
	void bindsKebabCaseProperties() {
		ScrapeProperties properties = bind(Map.of("tokengap.backend.enabled", "false",
				"tokengap.backend.scrape-interval", "1s", "tokengap.backend.metrics-url",
				"http://engine:9000/custom/metrics", "tokengap.backend.scrape-timeout", "800ms",
				"tokengap.backend.max-scrape-size", "512KB", "tokengap.backend.history", "10m"));
		assertThat(properties).isEqualTo(
				new ScrapeProperties(false, Duration.ofSeconds(1), URI.create("http://engine:9000/custom/metrics"),
						Duration.ofMillis(800), DataSize.ofKilobytes(512), Duration.ofMinutes(10)));
		assertThat(properties.historyCapacity()).isEqualTo(600);
	}

	@ParameterizedTest
	@CsvSource(delimiter = '|',
			textBlock = """
					scrape-timeout  | 250ms         | scrape-timeout (PT0.25S) must be shorter than tokengap.backend.scrape-interval
					scrape-timeout  | 0ms           | scrape-timeout must be positive
					scrape-interval | 0s            | scrape-interval must be positive
					max-scrape-size | 0B            | max-scrape-size must be between 1B and 2GB
					max-scrape-size | 3GB           | max-scrape-size must be between 1B and 2GB
					history         | 100ms         | history / scrape-interval must be between 1 and 100000 samples, got 0
					history         | 10h           | history / scrape-interval must be between 1 and 100000 samples, got 144000
					metrics-url     | ftp://engine/ | metrics-url must be an http(s):// URL with a host
					metrics-url     | /metrics      | metrics-url must be an http(s):// URL with a host
					""")
	void refusesUnusableValues(String property, String value, String message) {
		assertThatExceptionOfType(BindException.class)
			.isThrownBy(() -> bind(Map.of("tokengap.backend." + property, value)))
			.havingRootCause()
			.withMessageContaining(message);
	}

	@ParameterizedTest
	@CsvSource(delimiter = '|', textBlock = """
			http://127.0.0.1:8000  |                             | http://127.0.0.1:8000/metrics
			http://127.0.0.1:8000/ |                             | http://127.0.0.1:8000/metrics
			http://engine/v1-base  |                             | http://engine/v1-base/metrics
			http://127.0.0.1:8000  | http://127.0.0.1:9090/stats | http://127.0.0.1:9090/stats
			""")
	void resolvesTheMetricsUrlFromTheUpstreamUnlessSet(String upstream, String metricsUrl, String expected) {
		ScrapeProperties properties = (metricsUrl != null) ? bind(Map.of("tokengap.backend.metrics-url", metricsUrl))
				: ScrapeProperties.defaults();
		assertThat(properties.resolveMetricsUrl(URI.create(upstream))).isEqualTo(URI.create(expected));
	}

	private static ScrapeProperties bind(Map<String, String> values) {
		Binder binder = new Binder(new MapConfigurationPropertySource(values));
		return binder.bindOrCreate("tokengap.backend", Bindable.of(ScrapeProperties.class));
	}

}
