package dev.tokengap.proxy;

import java.io.ByteArrayOutputStream;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;

import dev.tokengap.metrics.TokengapMeters;
import dev.tokengap.testsupport.PrometheusText;
import dev.tokengap.testsupport.ScriptedUpstream.Step;
import dev.tokengap.testsupport.ScriptedUpstreamTests;
import dev.tokengap.testsupport.StreamingClient;
import dev.tokengap.testsupport.StreamingClient.Recording;
import dev.tokengap.timing.ContentWrite;
import dev.tokengap.timing.EngineReport;
import dev.tokengap.timing.GapObserver;
import dev.tokengap.timing.StreamTimer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * vLLM's per-request metrics ({@code --enable-per-request-metrics}) through the running
 * application over real HTTP: the stream reaches the client byte for byte, and the
 * engine's report is the stream's when it ends. The test listens to stream ends in place
 * of the spike detector, so its context is not kept for other tests.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=0", "tokengap.mode=demo", "tokengap.demo.load=false",
				"tokengap.metrics.models=m-engine-chat,m-engine-resp" })
@DirtiesContext
class EngineReportIntegrationTests extends ScriptedUpstreamTests {

	/** What the engine had reported for each stream, as it ended. */
	private final List<EngineReport> reports = new CopyOnWriteArrayList<>();

	@Autowired
	private TokengapMeters meters;

	@BeforeEach
	void listen() {
		this.meters.gapObserver(new GapObserver() {

			@Override
			public void streamEnded(StreamTimer timer) {
				EngineReportIntegrationTests.this.reports.add(timer.engineReport());
			}

			@Override
			public void firstContent(ContentWrite event, long promptTokens) {
			}

			@Override
			public void gap(StreamTimer timer, int choice, String requestId, String model, String endpoint,
					ContentWrite event) {
			}

		});
	}

	/** The usage chunk comes in two writes, split inside its metrics object. */
	@Test
	void aChatStreamsEngineReportReachesTheRecorderOnceAndTheStreamTheClientUnchanged() {
		String usage = "data: {\"id\":\"chatcmpl-x\",\"object\":\"chat.completion.chunk\",\"created\":1,"
				+ "\"model\":\"m-engine-chat\",\"choices\":[],\"usage\":{\"prompt_tokens\":42,\"completion_tokens\":2,"
				+ "\"total_tokens\":44},\"metrics\":{\"time_to_first_token_ms\":85.2,\"generation_time_ms\":1240.5,"
				+ "\"queue_time_ms\":12.3,\"mean_itl_ms\":9.1,\"tokens_per_second\":103.2}}\n\n";
		int split = usage.indexOf("\"generation_time_ms\":12") + "\"generation_time_ms\":12".length();
		List<Step> steps = Step.list(Step.of(0, chat("\"role\":\"assistant\",\"content\":\"\"")),
				Step.of(0, chat("\"content\":\"one\"")), Step.of(20, chat("\"content\":\"two\"")),
				Step.of(20, usage.substring(0, split)), Step.of(20, usage.substring(split)),
				Step.of(0, "data: [DONE]\n\n"));
		upstream.stream(steps);
		Recording recording = post("/v1/chat/completions", "{\"model\":\"m-engine-chat\",\"stream\":true}");
		assertThat(recording.status()).isEqualTo(200);
		assertThat(recording.bytes()).isEqualTo(concat(steps));
		assertReportedOnce("m-engine-chat", "chat_completions", new EngineReport(12.3, 85.2, 1240.5, 9.1, -1));
	}

	@Test
	void aResponsesStreamsEngineReportReachesTheRecorderOnce() {
		List<Step> steps = Step.list(
				Step.of(0,
						"event: response.created\ndata: {\"response\":{\"id\":\"resp_x\","
								+ "\"status\":\"in_progress\",\"usage\":null,\"metrics\":null},\"sequence_number\":0,"
								+ "\"type\":\"response.created\"}\n\n"),
				Step.of(20,
						"event: response.output_text.delta\ndata: {\"content_index\":0,\"delta\":\"Hi\","
								+ "\"item_id\":\"msg_x\",\"logprobs\":[],\"output_index\":0,\"sequence_number\":1,"
								+ "\"type\":\"response.output_text.delta\"}\n\n"),
				Step.of(20,
						"event: response.completed\ndata: {\"response\":{\"id\":\"resp_x\",\"status\":\"completed\","
								+ "\"usage\":{\"input_tokens\":9,\"output_tokens\":1,\"total_tokens\":10},"
								+ "\"metrics\":{\"time_to_first_token_ms\":40.0,\"generation_time_ms\":0.0,"
								+ "\"queue_time_ms\":1.5e-05,\"mean_itl_ms\":null,\"tokens_per_second\":null,"
								+ "\"num_preemptions\":0}},\"sequence_number\":2,\"type\":\"response.completed\"}\n\n"));
		upstream.stream(steps);
		Recording recording = post("/v1/responses", "{\"model\":\"m-engine-resp\",\"stream\":true,\"input\":\"hi\"}");
		assertThat(recording.bytes()).isEqualTo(concat(steps));
		assertReportedOnce("m-engine-resp", "responses", new EngineReport(1.5e-05, 40.0, 0.0, Double.NaN, 0));
	}

	/**
	 * One stream, completed (counted just after it was said to end), with the engine's
	 * report.
	 */
	private void assertReportedOnce(String model, String endpoint, EngineReport expected) {
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(PrometheusText.scrape(this.managementPort)
				.value("tokengap_streams_total", "model_name", model, "endpoint", endpoint, "outcome", "completed"))
				.isEqualTo(1));
		assertThat(this.reports).containsExactly(expected);
	}

	private Recording post(String path, String json) {
		return StreamingClient.record("http://127.0.0.1:" + this.port + path, json);
	}

	private static String chat(String delta) {
		return "data: {\"id\":\"chatcmpl-x\",\"object\":\"chat.completion.chunk\",\"created\":1,"
				+ "\"model\":\"m-engine-chat\",\"choices\":[{\"index\":0,\"delta\":{" + delta + "},"
				+ "\"logprobs\":null,\"finish_reason\":null}]}\n\n";
	}

	private static byte[] concat(List<Step> steps) {
		ByteArrayOutputStream all = new ByteArrayOutputStream();
		steps.forEach((step) -> all.writeBytes(step.bytes()));
		return all.toByteArray();
	}

}
