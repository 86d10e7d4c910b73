package dev.tokengap.backend;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.tokengap.metrics.BackendMeters;
import dev.tokengap.testsupport.HealthyStream;
import dev.tokengap.testsupport.PrometheusText;
import dev.tokengap.testsupport.ScriptedUpstream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The engine's {@code /metrics} changing under a running tokengap: from vLLM V1 names to
 * V0 names and back, and into garbage, an oversize body and a slow answer. The mirror
 * follows whatever the engine exports now, {@code tokengap_backend_up} drops and
 * recovers, and streams through the proxy never notice. Scrapes every 500 ms with a 450
 * ms timeout: a loaded 2-core machine makes the default 200 ms time out on its own.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=0", "tokengap.backend.max-scrape-size=256KB",
				"tokengap.backend.scrape-interval=500ms", "tokengap.backend.scrape-timeout=450ms",
				"tokengap.metrics.models=m-healthy" })
class EngineMetricsFaultIntegrationTests {

	static final ScriptedUpstream engine = ScriptedUpstream.start();

	private static final AtomicReference<String> exposition = new AtomicReference<>("");

	private static final AtomicReference<Duration> delay = new AtomicReference<>(Duration.ZERO);

	private static final String V1 = MetricsFixtures.exposition(MetricsFixtures.V1_FULL)
		.replaceFirst("(?m)^(vllm:num_requests_running\\{.*\\}) 0\\.0$", "$1 3.0")
		.replaceFirst("(?m)^(vllm:kv_cache_usage_perc\\{.*\\}) 0\\.0$", "$1 0.25");

	@LocalServerPort
	int port;

	@LocalManagementPort
	int managementPort;

	@DynamicPropertySource
	static void engineUrl(DynamicPropertyRegistry registry) {
		registry.add("tokengap.upstream.url", engine::url);
	}

	@Test
	void theMirrorFollowsAnEngineWhoseMetricsChangeAndBreakWhileStreamsAreUnaffected() throws Exception {
		// A scrape abandoned during the delay leaves Reactor Netty's server writing to a
		// closed connection, which drops the body unreleased: a wrapped array is the
		// GC's, never a leak.
		engine.route("/metrics", (req, res) -> res.header("content-type", "text/plain; version=0.0.4")
			.sendByteArray(Mono.delay(delay.get()).map((tick) -> exposition.get().getBytes(StandardCharsets.UTF_8))));
		HealthyStream.script(engine);
		serve(V1);
		assertMirror(3, 0.25, Double.NaN);
		serve(MetricsFixtures.V0);
		assertMirror(5, 0.42, 2);
		serve("<html><body>502 Bad Gateway</body></html>\n\u0000\u00ff{{{ not an exposition");
		assertDown();
		serve(V1);
		assertMirror(3, 0.25, Double.NaN);
		serve("vllm:num_requests_running{model_name=\"m\"} 1.0\n".repeat(10_000));
		assertDown();
		serve(MetricsFixtures.V0);
		assertMirror(5, 0.42, 2);
		delay.set(Duration.ofSeconds(2));
		assertDown();
		delay.set(Duration.ZERO);
		serve(V1);
		assertMirror(3, 0.25, Double.NaN);
	}

	/**
	 * Serves a new body, with a healthy stream through the proxy while the scrapes see
	 * it.
	 */
	private void serve(String body) {
		exposition.set(body);
	}

	private void assertMirror(double running, double kvUsage, double swapped) throws Exception {
		HealthyStream healthy = HealthyStream.start(this.port, "m-healthy");
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
			PrometheusText metrics = metrics();
			assertThat(metrics.value(BackendMeters.UP)).isEqualTo(1);
			assertThat(metrics.value(BackendMeters.RUNNING)).isEqualTo(running);
			assertThat(metrics.value(BackendMeters.KV_CACHE_USAGE)).isEqualTo(kvUsage);
			if (Double.isNaN(swapped)) {
				assertThat(metrics.matching(BackendMeters.SWAPPED)).as("a V1 engine exports no swapped").isEmpty();
			}
			else {
				assertThat(metrics.value(BackendMeters.SWAPPED)).isEqualTo(swapped);
			}
		});
		healthy.assertWhole();
	}

	private void assertDown() throws Exception {
		HealthyStream healthy = HealthyStream.start(this.port, "m-healthy");
		double errors = metrics().value(BackendMeters.SCRAPE_ERRORS);
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
			PrometheusText metrics = metrics();
			assertThat(metrics.value(BackendMeters.UP)).isZero();
			assertThat(metrics.value(BackendMeters.SCRAPE_ERRORS)).isGreaterThan(errors);
		});
		healthy.assertWhole();
	}

	private PrometheusText metrics() {
		return PrometheusText.scrape(this.managementPort);
	}

}
