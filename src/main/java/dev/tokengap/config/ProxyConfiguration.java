package dev.tokengap.config;

import java.net.URI;
import java.time.Duration;

import io.micrometer.registry.otlp.OtlpMeterRegistry;
import io.opentelemetry.api.trace.Tracer;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.info.BuildProperties;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.ssl.SslBundles;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;

import dev.tokengap.attribution.SpikeAttributor;
import dev.tokengap.backend.MetricsScraper;
import dev.tokengap.backend.ServedModels;
import dev.tokengap.metrics.BackendMeters;
import dev.tokengap.metrics.BucketEdges;
import dev.tokengap.metrics.GenAiMeters;
import dev.tokengap.metrics.MetricsProperties;
import dev.tokengap.metrics.ModelLabels;
import dev.tokengap.metrics.RequestTracer;
import dev.tokengap.metrics.TokengapMeters;
import dev.tokengap.metrics.TracingProperties;
import dev.tokengap.metrics.W3cRequestTracer;
import dev.tokengap.proxy.ProxyEventLoops;
import dev.tokengap.proxy.ProxyHandler;
import dev.tokengap.proxy.ProxyProperties;
import dev.tokengap.proxy.UpstreamClient;
import dev.tokengap.proxy.UpstreamProperties;
import dev.tokengap.sim.DemoProperties;
import dev.tokengap.sim.SimulatorProperties;
import dev.tokengap.sim.SimulatorServer;
import dev.tokengap.timing.NanoClock;
import dev.tokengap.tracing.OtelRequestTracer;

/**
 * Wires the proxy: the upstream (a real engine, or the in-process simulator in demo
 * mode), the meters, and the handler that owns the proxy port.
 */
@Configuration(proxyBeanMethods = false)
@Conditional(ProxyModeCondition.class)
class ProxyConfiguration {

	private static final Log logger = LogFactory.getLog(ProxyConfiguration.class);

	private static final Duration AUTO_EDGES_WAIT = Duration.ofSeconds(10);

	@Bean
	NanoClock nanoClock() {
		return NanoClock.SYSTEM;
	}

	@Bean(destroyMethod = "close")
	@Conditional(DemoModeCondition.class)
	SimulatorServer demoSimulator(SimulatorProperties properties) {
		SimulatorServer simulator = SimulatorServer.start(properties, "127.0.0.1", 0);
		logger.info("tokengap.mode=demo: DEMO MODE, proxying to the built-in vLLM simulator at " + "http://127.0.0.1:"
				+ simulator.port() + " (model " + properties.model()
				+ "). Set TOKENGAP_UPSTREAM_URL (and no demo mode) to put tokengap in front of a real vLLM.");
		return simulator;
	}

	@Bean(destroyMethod = "close")
	@Conditional(DemoModeCondition.class)
	@ConditionalOnProperty(name = "tokengap.demo.load", havingValue = "true", matchIfMissing = true)
	DemoLoadStarter demoLoadStarter(DemoProperties demo, SimulatorProperties simulator) {
		return new DemoLoadStarter(demo, simulator);
	}

	@Bean(destroyMethod = "close")
	UpstreamClient upstreamClient(UpstreamProperties properties, ObjectProvider<SimulatorServer> demo,
			ProxyEventLoops loops, ObjectProvider<SslBundles> bundles) {
		SimulatorServer simulator = demo.getIfAvailable();
		UpstreamProperties effective = properties;
		if (simulator != null) {
			effective = properties.withUrl(URI.create("http://127.0.0.1:" + simulator.port()));
		}
		else if (properties.url() == null) {
			throw new UpstreamUrlMissingException();
		}
		UpstreamClient client = new UpstreamClient(effective, loops, sslBundle(effective, bundles));
		logger.info("Proxying to " + client.base());
		return client;
	}

	private static SslBundle sslBundle(UpstreamProperties properties, ObjectProvider<SslBundles> bundles) {
		String name = properties.sslBundle();
		if (name == null || !properties.secure()) {
			return null;
		}
		SslBundles registry = bundles.getIfAvailable();
		if (registry == null) {
			throw new IllegalStateException(
					"tokengap.upstream.ssl-bundle=" + name + " is set, but no spring.ssl.bundle.* is configured");
		}
		return registry.getBundle(name);
	}

	@Bean
	ModelLabels modelLabels(MetricsProperties properties) {
		return new ModelLabels(properties.models(), properties.maxModels());
	}

	@Bean(initMethod = "start", destroyMethod = "close")
	ServedModels servedModels(UpstreamClient upstream, ModelLabels labels, BackendMeters meters,
			MetricsProperties metrics) {
		ServedModels served = new ServedModels(upstream.http(), upstream.base(), Duration.ofSeconds(60), (models) -> {
			labels.served(models.keySet());
			meters.servedModels(models, metrics.maxModels());
		});
		labels.onUnlisted(served::refreshSoon);
		return served;
	}

	@Bean
	TokengapMeters tokengapMeters(PrometheusRegistry registry, MetricsProperties metrics, TokengapProperties properties,
			NanoClock clock, ObjectProvider<MetricsScraper> scraper, ObjectProvider<BuildProperties> build,
			ObjectProvider<OtlpMeterRegistry> otlp) {
		BucketEdges read = "auto".equals(metrics.buckets()) ? autoEdges(scraper.getObject()) : null;
		BucketEdges edges = metrics.edges(read);
		String profile = metrics.profileInUse(read);
		logger.info("Histogram bucket edges (" + profile + "): " + edges);
		TokengapMeters meters = new TokengapMeters(registry, edges, properties.stallThreshold().toNanos(), clock);
		TokengapMeters.registerBuildInfo(registry, version(build.getIfAvailable()), profile);
		otlp.ifAvailable((exported) -> meters.genAi(new GenAiMeters(exported, edges)));
		return meters;
	}

	private static String version(BuildProperties build) {
		return (build != null && build.getVersion() != null) ? build.getVersion() : "unknown";
	}

	private static BucketEdges autoEdges(MetricsScraper scraper) {
		// Start-up only, on the main thread: a bounded wait for the engine's own edges.
		BucketEdges read = scraper.readEdges(AUTO_EDGES_WAIT)
			.blockOptional(AUTO_EDGES_WAIT.plusSeconds(1))
			.orElse(null);
		if (read == null) {
			logger.warn("tokengap.metrics.buckets=auto: could not read the engine's bucket edges within "
					+ AUTO_EDGES_WAIT + "; using vllm-v1");
			return null;
		}
		logger.info("tokengap.metrics.buckets=auto: using the engine's own bucket edges");
		return read;
	}

	/**
	 * The proxy port's event loops, disposed after its server has stopped.
	 * @return the loops
	 */
	@Bean(destroyMethod = "dispose")
	ProxyEventLoops proxyEventLoops() {
		ProxyEventLoops loops = ProxyEventLoops.create();
		logger.debug("Proxy port runs on " + loops);
		return loops;
	}

	/**
	 * With span export on
	 * ({@code management.opentelemetry.tracing.export.otlp.endpoint}), each request's
	 * span, made by OpenTelemetry's SDK; else W3C trace context alone.
	 */
	@Bean
	RequestTracer requestTracer(TracingProperties tracing, ObjectProvider<Tracer> spans,
			ObjectProvider<SpikeAttributor> spikes) {
		Tracer tracer = spans.getIfAvailable();
		return (tracer != null) ? new OtelRequestTracer(tracer, spikes.getIfAvailable())
				: new W3cRequestTracer(tracing.sampleRatio());
	}

	@Bean
	ProxyHandler httpHandler(UpstreamClient upstream, TokengapMeters meters, ModelLabels labels, ProxyProperties proxy,
			NanoClock clock, RequestTracer tracer) {
		return new ProxyHandler(upstream, meters, labels, proxy, clock, tracer);
	}

}
