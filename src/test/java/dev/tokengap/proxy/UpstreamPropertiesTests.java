package dev.tokengap.proxy;

import java.io.IOException;
import java.net.URI;
import java.time.Duration;

import org.junit.jupiter.api.Test;

import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.core.io.ClassPathResource;

import static org.assertj.core.api.Assertions.assertThat;

class UpstreamPropertiesTests {

	/**
	 * vLLM sends a streamed response's headers only when the request leaves its queue,
	 * which under heavy load takes well over 30 s: the shipped configuration must wait
	 * for that, and for an engine paused mid-stream (preemption, a long prefill beside
	 * it), rather than cut it.
	 */
	@Test
	void theShippedConfigurationWaitsMinutesForHeadersAndBetweenChunks() throws IOException {
		UpstreamProperties shipped = shipped();
		assertThat(shipped.responseTimeout()).isEqualTo(Duration.ofMinutes(10)).isGreaterThan(Duration.ofSeconds(30));
		assertThat(shipped.idleTimeout()).isEqualTo(Duration.ofMinutes(5)).isGreaterThan(Duration.ofSeconds(30));
	}

	/** The record's defaults as application.yml leaves them. */
	private static UpstreamProperties shipped() throws IOException {
		var sources = new YamlPropertySourceLoader().load("application.yml", new ClassPathResource("application.yml"));
		Binder binder = new Binder(ConfigurationPropertySources.from(sources));
		return binder.bindOrCreate("tokengap.upstream", Bindable.of(UpstreamProperties.class));
	}

	/**
	 * The injected sidecar builds its URL from the pod's {@code tokengap.dev/engine-port}
	 * annotation; a pod without it gets an empty port, which is vLLM's default.
	 */
	@Test
	void anEmptyPortIsVllmsDefaultPort() {
		assertThat(withUrl("http://127.0.0.1:").url()).hasToString("http://127.0.0.1:8000");
		assertThat(withUrl("http://127.0.0.1:/prefix").url()).hasToString("http://127.0.0.1:8000/prefix");
		assertThat(withUrl("http://127.0.0.1:8200").url()).hasToString("http://127.0.0.1:8200");
		assertThat(withUrl("http://vllm").url()).as("no port at all is HTTP's, as any URL").hasToString("http://vllm");
	}

	private static UpstreamProperties withUrl(String url) {
		return new UpstreamProperties(URI.create(url), Duration.ofMinutes(10), Duration.ofMinutes(5),
				Duration.ofSeconds(5), 2048, Duration.ofSeconds(4), Duration.ofSeconds(5), Duration.ofMinutes(10),
				null);
	}

}
