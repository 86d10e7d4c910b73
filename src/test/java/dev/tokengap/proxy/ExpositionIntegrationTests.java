package dev.tokengap.proxy;

import java.util.List;
import java.util.Map;

import io.netty.handler.codec.http.HttpMethod;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;

import dev.tokengap.testsupport.PrometheusText;
import dev.tokengap.testsupport.Promtool;
import dev.tokengap.testsupport.ScriptedUpstream;
import dev.tokengap.testsupport.ScriptedUpstream.Step;
import dev.tokengap.testsupport.ScriptedUpstreamTests;
import dev.tokengap.testsupport.StreamingClient;
import dev.tokengap.testsupport.StreamingClient.Exchange;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What Prometheus scrapes: valid exposition (checked by the real {@code promtool}),
 * exactly the profile's {@code le} edges as vLLM writes them, and nothing but health,
 * prometheus, info and spikes on the management port.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=0", "tokengap.mode=demo", "tokengap.metrics.models=m-expo" })
class ExpositionIntegrationTests extends ScriptedUpstreamTests {

	static final List<String> V1_TTFT = List.of("0.001", "0.005", "0.01", "0.02", "0.04", "0.06", "0.08", "0.1", "0.25",
			"0.5", "0.75", "1.0", "2.5", "5.0", "7.5", "10.0", "20.0", "40.0", "80.0", "160.0", "640.0", "2560.0",
			"+Inf");

	static final List<String> V1_ITL = List.of("0.01", "0.025", "0.05", "0.075", "0.1", "0.15", "0.2", "0.3", "0.4",
			"0.5", "0.75", "1.0", "2.5", "5.0", "7.5", "10.0", "20.0", "40.0", "80.0", "+Inf");

	static final List<String> V1_REQUEST = List.of("0.3", "0.5", "0.8", "1.0", "1.5", "2.0", "2.5", "5.0", "10.0",
			"15.0", "20.0", "30.0", "40.0", "50.0", "60.0", "120.0", "240.0", "480.0", "960.0", "1920.0", "7680.0",
			"+Inf");

	@BeforeEach
	void streamOnce() {
		upstream.stream(Step.list(Step.of(0, ProxyStreamingIntegrationTests.prelude()),
				Step.of(5, ProxyStreamingIntegrationTests.chunk("a")),
				Step.of(5, ProxyStreamingIntegrationTests.chunk("b")),
				Step.of(0, ProxyStreamingIntegrationTests.done())));
		StreamingClient.record("http://127.0.0.1:" + this.port + "/v1/chat/completions",
				"{\"model\":\"m-expo\",\"stream\":true}");
	}

	@Test
	void exportsExactlyTheVllmV1EdgesAsVllmWritesThem() {
		PrometheusText metrics = PrometheusText.scrape(this.managementPort);
		String[] m = { "model_name", "m-expo", "endpoint", "chat_completions" };
		assertThat(metrics.les("tokengap_time_to_first_token_seconds", m)).containsExactlyElementsOf(V1_TTFT);
		assertThat(metrics.les("tokengap_time_to_first_byte_seconds", m)).containsExactlyElementsOf(V1_TTFT);
		assertThat(metrics.les("tokengap_inter_token_latency_seconds", m)).containsExactlyElementsOf(V1_ITL);
		assertThat(metrics.les("tokengap_time_per_output_token_seconds", m)).containsExactlyElementsOf(V1_ITL);
		assertThat(metrics.les("tokengap_stream_max_gap_seconds", m)).containsExactlyElementsOf(V1_ITL);
		assertThat(metrics.les("tokengap_e2e_request_latency_seconds", m)).containsExactlyElementsOf(V1_REQUEST);
		assertThat(metrics.les("tokengap_stream_jitter_ratio", m)).containsExactly("1.0", "1.25", "1.5", "2.0", "3.0",
				"5.0", "10.0", "20.0", "50.0", "100.0", "+Inf");
		assertThat(numeric(metrics.les("tokengap_proxy_write_delay_seconds", m))).containsExactly(0.0001, 0.00025,
				0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, Double.POSITIVE_INFINITY);
	}

	@Test
	void scrapeIsAcceptedByPromtool() throws Exception {
		String scrape = PrometheusText.scrape(this.managementPort).text();
		// The whole scrape must parse;
		// lint findings may only concern Micrometer's JVM series.
		Promtool.Result whole = Promtool.runWithInput(scrape, "check", "metrics");
		assertThat(whole.exit()).as("promtool check metrics said:%n%s", whole.output()).isIn(0, 3);
		assertThat(whole.output().lines().filter((line) -> line.startsWith("tokengap_"))).isEmpty();
		// Our own series must be lint-clean.
		String ours = scrape.lines()
			.filter((line) -> line.startsWith("tokengap_") || line.startsWith("# HELP tokengap_")
					|| line.startsWith("# TYPE tokengap_"))
			.collect(java.util.stream.Collectors.joining("\n", "", "\n"));
		assertThat(ours).contains("tokengap_inter_token_latency_seconds_bucket");
		Promtool.Result own = Promtool.runWithInput(ours, "check", "metrics");
		assertThat(own.exit()).as("promtool check metrics said:%n%s", own.output()).isZero();
	}

	@Test
	void managementPortExposesExactlyHealthPrometheusInfoAndSpikes() throws Exception {
		Exchange index = client(this.managementPort).get("/actuator").whole();
		assertThat(index.status()).isEqualTo(200);
		assertThat(index.json().path("_links").propertyNames()).containsExactlyInAnyOrder("self", "health",
				"health-path", "prometheus", "info", "spikes");
		assertThat(get(this.managementPort, "/actuator/health")).isEqualTo(200);
		assertThat(get(this.managementPort, "/actuator/info")).isEqualTo(200);
		assertThat(get(this.managementPort, "/actuator/prometheus")).isEqualTo(200);
		assertThat(get(this.managementPort, "/actuator/spikes")).isEqualTo(200);
		for (String hidden : List.of("/actuator/env", "/actuator/heapdump", "/actuator/threaddump", "/actuator/loggers",
				"/actuator/configprops", "/actuator/beans", "/actuator/metrics", "/actuator/shutdown",
				"/actuator/mappings", "/actuator/conditions", "/actuator/scheduledtasks", "/actuator/caches",
				"/actuator/startup", "/actuator/sbom", "/actuator/httpexchanges", "/actuator/logfile",
				"/actuator/auditevents", "/actuator/env/java.home", "/actuator/loggers/ROOT")) {
			assertThat(get(this.managementPort, hidden)).as(hidden).isEqualTo(404);
		}
		assertThat(client(this.managementPort).exchange(HttpMethod.POST, "/actuator/shutdown", null, Map.of())
			.whole()
			.status()).isEqualTo(404);
	}

	@Test
	void proxyPortForwardsEveryActuatorPathToTheEngine() throws Exception {
		upstream.respond(404, "application/json", "{\"detail\":\"Not Found\"}");
		List<String> paths = List.of("/actuator", "/actuator/health", "/actuator/prometheus", "/actuator/env",
				"/actuator/heapdump", "/actuator/spikes", "/actuator/shutdown");
		for (String path : paths) {
			assertThat(get(this.port, path)).as(path).isEqualTo(404);
		}
		assertThat(upstream.received()).extracting(ScriptedUpstream.Received::uri).containsExactlyElementsOf(paths);
		assertThat(upstream.received("/actuator/prometheus")).hasSize(1);
		assertThat(upstream.received("/actuator/prometheus").get(0).uri()).isEqualTo("/actuator/prometheus");
	}

	private static List<Double> numeric(List<String> les) {
		return les.stream().map((le) -> "+Inf".equals(le) ? Double.POSITIVE_INFINITY : Double.parseDouble(le)).toList();
	}

	private static int get(int port, String path) {
		return client(port).get(path).whole().status();
	}

	private static StreamingClient client(int port) {
		return StreamingClient.at("http://127.0.0.1:" + port);
	}

}
