package dev.tokengap.deploy;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;

import dev.tokengap.testsupport.Executables;
import dev.tokengap.testsupport.PrometheusText;
import dev.tokengap.testsupport.StreamingClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A real Prometheus ({@code /usr/bin/prometheus}, exemplar storage on) scrapes tokengap's
 * management port in the OpenMetrics format, and its exemplar query returns the trace id
 * of a stream the simulator was made to stall: the client's {@code traceparent} reached
 * the stall's ITL bucket and the stream's worst-gap bucket. The same trace id and the
 * spike's position are in {@code /actuator/spikes}; the Prometheus text format carries no
 * exemplar.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = { "management.server.port=0",
		"tokengap.mode=demo", "tokengap.demo.load=false", "tokengap.sim.step-fixed-cost=5ms" })
class ExemplarPrometheusIntegrationTests {

	static final String TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";

	static final JsonMapper JSON = JsonMapper.builder().build();

	static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	@LocalServerPort
	int port;

	@LocalManagementPort
	int managementPort;

	@TempDir
	Path dir;

	private Process prometheus;

	@AfterEach
	void stopPrometheus() throws InterruptedException {
		if (this.prometheus != null) {
			this.prometheus.destroy();
			this.prometheus.waitFor();
		}
	}

	@Test
	void prometheusReturnsTheTraceIdOfAStalledStreamFromItsExemplars() throws Exception {
		File binary = Executables.onPath("prometheus", "prometheus is not installed (.ci/run installs it)",
				"prometheus is not installed: the exemplar scrape is not tested");
		String body = "{\"model\":\"sim-llama-3-8b\",\"stream\":true,\"max_tokens\":30,"
				+ "\"messages\":[{\"role\":\"user\",\"content\":\"stall once, early\"}]}";
		long events = StreamingClient.at("http://127.0.0.1:" + this.port)
			.stream("/v1/chat/completions", body,
					Map.of("traceparent", "00-" + TRACE + "-00f067aa0ba902b7-01", "X-Sim-Engine-Stall", "5:1500"))
			.filter((event) -> !event.done() && !event.content().isEmpty())
			.count()
			.block(Duration.ofSeconds(30));
		assertThat(events).isEqualTo(30);

		String openMetrics = get("http://127.0.0.1:" + this.managementPort + "/actuator/prometheus",
				"application/openmetrics-text;version=1.0.0");
		assertThat(lines(openMetrics, "tokengap_stream_max_gap_seconds_bucket"))
			.anySatisfy((line) -> assertThat(line).contains("trace_id=\"" + TRACE + "\""));
		// OpenMetrics 1.0 has exemplars on buckets only: Prometheus 2.x refuses a scrape
		// with one on a _count line
		assertThat(lines(openMetrics, "tokengap_")).filteredOn((line) -> line.contains("_count{"))
			.noneMatch((line) -> line.contains(" # {"));
		assertThat(PrometheusText.get(this.managementPort, "/actuator/prometheus")).doesNotContain("trace_id");
		await().atMost(Duration.ofSeconds(20))
			.untilAsserted(() -> assertThat(PrometheusText.get(this.managementPort, "/actuator/spikes"))
				.contains("\"traceId\":\"" + TRACE + "\"")
				.contains("\"position\":\"head\"")
				.contains("\"streamEvents\":30"));

		int web = freePort();
		this.prometheus = startPrometheus(binary, web);
		String api = "http://127.0.0.1:" + web;
		await().atMost(Duration.ofSeconds(60))
			.pollInterval(Duration.ofMillis(500))
			.ignoreExceptions()
			.untilAsserted(() -> {
				assertThat(exemplarTraceIds(api, "tokengap_stream_max_gap_seconds_bucket")).contains(TRACE);
				assertThat(exemplarTraceIds(api, "tokengap_inter_token_latency_seconds_bucket")).contains(TRACE);
			});
	}

	private Process startPrometheus(File binary, int web) throws IOException {
		Path config = this.dir.resolve("prometheus.yml");
		Files.writeString(config,
				"global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: tokengap\n"
						+ "    metrics_path: /actuator/prometheus\n    static_configs:\n      - targets: ['127.0.0.1:"
						+ this.managementPort + "']\n");
		return new ProcessBuilder(binary.getPath(), "--config.file=" + config,
				"--storage.tsdb.path=" + this.dir.resolve("data"), "--web.listen-address=127.0.0.1:" + web,
				"--enable-feature=exemplar-storage")
			.redirectErrorStream(true)
			.redirectOutput(this.dir.resolve("prometheus.log").toFile())
			.start();
	}

	private static List<String> exemplarTraceIds(String api, String series) throws Exception {
		long now = System.currentTimeMillis() / 1000;
		JsonNode body = JSON
			.readTree(get(api + "/api/v1/query_exemplars?query=" + URLEncoder.encode(series, StandardCharsets.UTF_8)
					+ "&start=" + (now - 600) + "&end=" + (now + 60), "application/json"));
		List<String> ids = new ArrayList<>();
		body.path("data")
			.forEach((forSeries) -> forSeries.path("exemplars")
				.forEach((exemplar) -> ids.add(exemplar.path("labels").path("trace_id").asString())));
		return ids;
	}

	private static List<String> lines(String text, String prefix) {
		return text.lines().filter((line) -> line.startsWith(prefix)).toList();
	}

	private static String get(String url, String accept) throws Exception {
		HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(URI.create(url))
			.header("Accept", accept)
			.timeout(Duration.ofSeconds(10))
			.build(), HttpResponse.BodyHandlers.ofString());
		assertThat(response.statusCode()).as(url).isEqualTo(200);
		return response.body();
	}

	private static int freePort() throws IOException {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
	}

}
