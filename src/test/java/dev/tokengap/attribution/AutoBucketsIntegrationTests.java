package dev.tokengap.attribution;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.tokengap.metrics.BucketEdges;
import dev.tokengap.metrics.TokengapMeters;
import dev.tokengap.testsupport.ScriptedUpstream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code tokengap.metrics.buckets=auto}: the edges are read from the engine's own
 * histograms, here an engine started with custom buckets.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=0", "tokengap.metrics.buckets=auto" })
class AutoBucketsIntegrationTests {

	static final ScriptedUpstream engine = ScriptedUpstream.start();

	static {
		engine.respond(200, "text/plain; version=0.0.4", """
				# TYPE vllm:num_requests_running gauge
				vllm:num_requests_running{engine="0",model_name="m"} 0.0
				# TYPE vllm:time_to_first_token_seconds histogram
				vllm:time_to_first_token_seconds_bucket{engine="0",le="0.05",model_name="m"} 0.0
				vllm:time_to_first_token_seconds_bucket{engine="0",le="0.5",model_name="m"} 0.0
				vllm:time_to_first_token_seconds_bucket{engine="0",le="5.0",model_name="m"} 0.0
				vllm:time_to_first_token_seconds_bucket{engine="0",le="+Inf",model_name="m"} 0.0
				# TYPE vllm:inter_token_latency_seconds histogram
				vllm:inter_token_latency_seconds_bucket{engine="0",le="0.02",model_name="m"} 0.0
				vllm:inter_token_latency_seconds_bucket{engine="0",le="0.2",model_name="m"} 0.0
				vllm:inter_token_latency_seconds_bucket{engine="0",le="+Inf",model_name="m"} 0.0
				# TYPE vllm:e2e_request_latency_seconds histogram
				vllm:e2e_request_latency_seconds_bucket{engine="0",le="3.0",model_name="m"} 0.0
				vllm:e2e_request_latency_seconds_bucket{engine="0",le="30.0",model_name="m"} 0.0
				vllm:e2e_request_latency_seconds_bucket{engine="0",le="+Inf",model_name="m"} 0.0
				""");
	}

	@Autowired
	TokengapMeters meters;

	@DynamicPropertySource
	static void engineUrl(DynamicPropertyRegistry registry) {
		registry.add("tokengap.upstream.url", engine::url);
	}

	@AfterAll
	static void stopEngine() {
		engine.close();
	}

	@Test
	void usesTheEnginesOwnCustomEdges() {
		BucketEdges edges = this.meters.edges();
		assertThat(edges.ttft()).containsExactly(0.05, 0.5, 5.0);
		assertThat(edges.itl()).containsExactly(0.02, 0.2);
		assertThat(edges.request()).containsExactly(3.0, 30.0);
	}

}
