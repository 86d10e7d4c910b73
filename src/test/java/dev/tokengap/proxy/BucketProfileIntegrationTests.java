package dev.tokengap.proxy;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;

import dev.tokengap.testsupport.PrometheusText;
import dev.tokengap.testsupport.ScriptedUpstream;
import dev.tokengap.testsupport.ScriptedUpstream.Step;
import dev.tokengap.testsupport.ScriptedUpstreamTests;
import dev.tokengap.testsupport.StreamingClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code vllm-v0} profile with one family given explicitly.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=0", "tokengap.mode=demo", "tokengap.metrics.buckets=vllm-v0",
				"tokengap.metrics.request-buckets=1.0,10.0,100.0", "tokengap.metrics.models=m-v0" })
class BucketProfileIntegrationTests extends ScriptedUpstreamTests {

	@Test
	void exportsTheVllmV0EdgesAndTheExplicitFamily() {
		upstream.stream(Step.list(Step.of(0, ProxyStreamingIntegrationTests.chunk("a")),
				Step.of(5, ProxyStreamingIntegrationTests.chunk("b")),
				Step.of(0, ProxyStreamingIntegrationTests.done())));
		StreamingClient.record("http://127.0.0.1:" + this.port + "/v1/completions",
				"{\"model\":\"m-v0\",\"stream\":true}");
		PrometheusText metrics = PrometheusText.scrape(this.managementPort);
		String[] m = { "model_name", "m-v0", "endpoint", "completions" };
		assertThat(metrics.les("tokengap_time_to_first_token_seconds", m)).containsExactly("0.001", "0.005", "0.01",
				"0.02", "0.04", "0.06", "0.08", "0.1", "0.25", "0.5", "0.75", "1.0", "2.5", "5.0", "7.5", "10.0",
				"+Inf");
		assertThat(metrics.les("tokengap_inter_token_latency_seconds", m)).containsExactly("0.01", "0.025", "0.05",
				"0.075", "0.1", "0.15", "0.2", "0.3", "0.4", "0.5", "0.75", "1.0", "2.5", "+Inf");
		assertThat(metrics.les("tokengap_e2e_request_latency_seconds", m)).containsExactly("1.0", "10.0", "100.0",
				"+Inf");
		assertThat(metrics.matching("tokengap_build_info")).singleElement().satisfies((info) -> {
			assertThat(info.labels()).containsEntry("bucket_profile", "custom").containsKey("version");
			assertThat(info.labels().get("version")).isNotEqualTo("unknown");
			assertThat(info.value()).isEqualTo(1);
		});
	}

}
