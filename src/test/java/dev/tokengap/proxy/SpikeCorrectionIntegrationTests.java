package dev.tokengap.proxy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;

import dev.tokengap.testsupport.PrometheusText;
import dev.tokengap.testsupport.ScriptedUpstream.Step;
import dev.tokengap.testsupport.ScriptedUpstreamTests;
import dev.tokengap.testsupport.StreamingClient;
import dev.tokengap.testsupport.StreamingClient.Recording;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The engine's per-request figures correct a spike over real HTTP: a chat stream whose
 * events are 20 ms apart except one 700 ms pause that shifts everything after it (the
 * engine had finished that token on time: its decode time, as it reports it in the final
 * usage chunk, leaves the pause out). The engine's {@code /metrics} cannot be read here,
 * so the spike is {@code unknown} when judged; once the stream ends the report makes it
 * {@code engine_other}, scope {@code after_engine}, and that is the cause it is counted
 * under.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = { "management.server.port=0",
		"tokengap.mode=demo", "tokengap.demo.load=false", "tokengap.metrics.models=m-corrected" })
class SpikeCorrectionIntegrationTests extends ScriptedUpstreamTests {

	@Test
	void aPauseTheEnginesOwnDecodeTimeLeavesOutIsCorrectedToAfterTheEngine() throws Exception {
		List<Step> steps = new ArrayList<>();
		steps.add(Step.of(0, chat("\"role\":\"assistant\",\"content\":\"\"")));
		for (int i = 0; i < 40; i++) {
			steps.add(Step.of((i == 25) ? 700 : (i == 0) ? 0 : 20, chat("\"content\":\"t" + i + "\"")));
		}
		// 39 gaps of 20 ms inside the engine: 780 ms;
		// tokengap receives them over 1,460 ms.
		steps.add(Step.of(20, "data: {\"id\":\"chatcmpl-c\",\"object\":\"chat.completion.chunk\",\"created\":1,"
				+ "\"model\":\"m-corrected\",\"choices\":[],\"usage\":{\"prompt_tokens\":4,\"completion_tokens\":40,"
				+ "\"total_tokens\":44},\"metrics\":{\"time_to_first_token_ms\":30.5,\"generation_time_ms\":780.0,"
				+ "\"queue_time_ms\":0.4,\"mean_itl_ms\":20.0,\"tokens_per_second\":49.3}}\n\n"));
		steps.add(Step.of(0, "data: [DONE]\n\n"));
		upstream.stream(steps);
		Recording recording = StreamingClient.record("http://127.0.0.1:" + this.port + "/v1/chat/completions",
				"{\"model\":\"m-corrected\",\"stream\":true,\"stream_options\":{\"include_usage\":true}}");
		assertThat(recording.status()).isEqualTo(200);
		// On a loaded machine a 20 ms gap can also stretch into a spike; it is corrected
		// the same way, so every spike of the stream is counted once, under engine_other.
		await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
			long listed = PrometheusText.get(this.managementPort, "/actuator/spikes")
				.split("\"model\":\"m-corrected\"", -1).length - 1;
			assertThat(listed).isPositive();
			assertThat(PrometheusText.scrape(this.managementPort)
				.value("tokengap_gap_spike_seconds_count", "model_name", "m-corrected", "cause", "engine_other"))
				.isEqualTo(listed);
		});
		assertThat(PrometheusText.scrape(this.managementPort)
			.matching("tokengap_gap_spike_seconds_count", "model_name", "m-corrected", "cause", "unknown"))
			.as("counted once, under the cause it ended up with")
			.allSatisfy((sample) -> assertThat(sample.value()).isZero());
		String spikes = PrometheusText.get(this.managementPort, "/actuator/spikes");
		assertThat(spikes).contains("\"tokenIndex\":25", "\"cause\":\"engine_other\"",
				"\"causes\":[\"engine_other\",\"unknown\"]", "\"scope\":\"after_engine\"", "\"generationMs\":780.0");
	}

	private static String chat(String delta) {
		return "data: {\"id\":\"chatcmpl-c\",\"object\":\"chat.completion.chunk\",\"created\":1,"
				+ "\"model\":\"m-corrected\",\"choices\":[{\"index\":0,\"delta\":{" + delta + "},"
				+ "\"logprobs\":null,\"finish_reason\":null}]}\n\n";
	}

}
