package dev.tokengap.config;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.context.ConfigurationPropertiesAutoConfiguration;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.tokengap.attribution.AttributionProperties;
import dev.tokengap.backend.ScrapeProperties;
import dev.tokengap.metrics.BackendMeters;
import dev.tokengap.metrics.MetricsProperties;
import dev.tokengap.metrics.TracingProperties;
import dev.tokengap.proxy.ProxyProperties;
import dev.tokengap.proxy.UpstreamClient;
import dev.tokengap.proxy.UpstreamProperties;
import dev.tokengap.sim.DemoProperties;
import dev.tokengap.sim.SimulatorProperties;
import dev.tokengap.sim.SimulatorServer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Fail closed: without an engine URL the proxy refuses to start, unless the demo is asked
 * for. A context runner, not the whole application: closing a whole application would
 * dispose Reactor Netty's global event loops under the other tests of this JVM.
 */
class StartupModeTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(ConfigurationPropertiesAutoConfiguration.class))
		.withUserConfiguration(Properties.class, ProxyConfiguration.class)
		.withPropertyValues("tokengap.backend.enabled=false");

	@Test
	void refusesToStartWithoutAnUpstreamUrlNamingTheProperty() {
		this.runner.run((context) -> {
			assertThat(context).hasFailed();
			Throwable failure = context.getStartupFailure();
			assertThat(failure).rootCause()
				.isInstanceOf(UpstreamUrlMissingException.class)
				.hasMessageContaining("tokengap.upstream.url")
				.hasMessageContaining("TOKENGAP_UPSTREAM_URL")
				.hasMessageContaining("--tokengap.mode=demo");
			FailureAnalysis analysis = new UpstreamUrlMissingFailureAnalyzer().analyze(failure);
			assertThat(analysis.getDescription()).contains("tokengap.upstream.url", "TOKENGAP_UPSTREAM_URL");
			assertThat(analysis.getAction()).contains("TOKENGAP_UPSTREAM_URL", "--tokengap.mode=demo");
		});
	}

	@Test
	void proxyModeSaidOutLoudStillNeedsTheUrl() {
		this.runner.withPropertyValues("tokengap.mode=proxy")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.isInstanceOf(UpstreamUrlMissingException.class));
	}

	@Test
	void demoModeStartsTheSimulatorAndTheDemoLoad() {
		this.runner.withPropertyValues("tokengap.mode=demo").run((context) -> {
			assertThat(context).hasNotFailed();
			SimulatorServer simulator = context.getBean(SimulatorServer.class);
			assertThat(context.getBean(UpstreamClient.class).base()).endsWith(":" + simulator.port());
			assertThat(context).hasSingleBean(DemoLoadStarter.class);
		});
	}

	@Test
	void anUpstreamUrlRunsTheProxyWithoutTheSimulator() {
		this.runner.withPropertyValues("tokengap.upstream.url=http://127.0.0.1:9").run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context).doesNotHaveBean(SimulatorServer.class).doesNotHaveBean(DemoLoadStarter.class);
			assertThat(context.getBean(UpstreamClient.class).base()).isEqualTo("http://127.0.0.1:9");
		});
	}

	@Test
	void aConfiguredEngineWinsOverTheDemoModeTheBuildPasses() {
		this.runner.withPropertyValues("tokengap.mode=demo", "tokengap.upstream.url=http://127.0.0.1:9")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context).doesNotHaveBean(SimulatorServer.class).doesNotHaveBean(DemoLoadStarter.class);
				assertThat(context.getBean(UpstreamClient.class).base()).isEqualTo("http://127.0.0.1:9");
			});
	}

	@Configuration(proxyBeanMethods = false)
	@EnableConfigurationProperties({ UpstreamProperties.class, ProxyProperties.class, MetricsProperties.class,
			TokengapProperties.class, SimulatorProperties.class, DemoProperties.class, ScrapeProperties.class,
			AttributionProperties.class, TracingProperties.class })
	static class Properties {

		@Bean
		PrometheusRegistry prometheusRegistry() {
			return new PrometheusRegistry();
		}

		@Bean
		BackendMeters backendMeters(PrometheusRegistry registry) {
			return new BackendMeters(registry);
		}

	}

}
