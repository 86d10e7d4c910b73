package dev.tokengap.proxy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Mono;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import dev.tokengap.testsupport.PrometheusText;
import dev.tokengap.testsupport.RawHttpClient;
import dev.tokengap.testsupport.ScriptedUpstream.Step;
import dev.tokengap.testsupport.ScriptedUpstreamTests;
import dev.tokengap.testsupport.StreamingClient;
import dev.tokengap.testsupport.StreamingClient.Exchange;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Whatever happens to a request (answered, streamed with a spike, refused by the engine
 * or by tokengap, malformed), its prompt, its completion and the client's credentials
 * never appear in a log line at the default levels, in the exposition or in
 * {@code /actuator/spikes}.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=0", "tokengap.mode=demo", "tokengap.metrics.models=m-log",
				"tokengap.proxy.max-request-body=4KB", "tokengap.upstream.response-timeout=1s" })
@ExtendWith(OutputCaptureExtension.class)
class LogCaptureIntegrationTests extends ScriptedUpstreamTests {

	static final String PROMPT = "PROMPT-zebra-quartz-4417";

	static final String COMPLETION = "COMPLETION-walrus-tangerine-9920";

	static final String BEARER = "sk-secret-LOGTEST-bearer-31337";

	static final String API_KEY = "xk-secret-LOGTEST-apikey-27182";

	static final List<String> NEVER_SHOWN = List.of(PROMPT, COMPLETION, BEARER, API_KEY);

	@Test
	void neverLogsPromptsCompletionsOrCredentials(CapturedOutput output) throws Exception {
		answerNonStreaming();
		streamWithASpike("/v1/chat/completions");
		streamWithASpike("/v1/completions");
		upstream.respond(400, "application/json",
				"{\"error\":{\"message\":\"bad prompt " + PROMPT + "\",\"code\":400}}");
		assertThat(post("/v1/chat/completions", chat(false)).status()).isEqualTo(400);
		assertThat(post("/v1/chat/completions", "{\"model\":\"m-log\",\"prompt\":\"" + PROMPT.repeat(200) + "\"}")
			.status()).isEqualTo(413);
		upstream.handle((req, res) -> Mono.delay(Duration.ofSeconds(3)).then(res.status(200).send().then()));
		assertThat(post("/v1/completions", completion(false)).status()).isEqualTo(504);
		refusedMalformed();
		String spikes = awaitSpikes();
		String exposition = PrometheusText.scrape(this.managementPort).text();
		for (String secret : NEVER_SHOWN) {
			assertThat(output.getAll()).as("log output").doesNotContain(secret);
			assertThat(exposition).as("exposition").doesNotContain(secret);
			assertThat(spikes).as("/actuator/spikes").doesNotContain(secret);
		}
		// The capture did see the exchanges: what is logged about them is there,
		// without content.
		assertThat(output.getAll()).contains("answered 413", "answered 504", "Decoding failed", "spike request_id=");
	}

	private void answerNonStreaming() {
		upstream.respond(200, "application/json", "{\"id\":\"c\",\"object\":\"chat.completion\",\"choices\":[{"
				+ "\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"" + COMPLETION + "\"}}]}");
		assertThat(post("/v1/chat/completions", chat(false)).body()).contains(COMPLETION);
		assertThat(post("/v1/completions", completion(false)).body()).contains(COMPLETION);
	}

	private void streamWithASpike(String path) {
		List<Step> steps = new ArrayList<>();
		steps.add(Step.of(0, ProxyStreamingIntegrationTests.prelude()));
		for (int i = 0; i < 8; i++) {
			steps.add(Step.of(20, ProxyStreamingIntegrationTests.chunk(COMPLETION + i)));
		}
		steps.add(Step.of(500, ProxyStreamingIntegrationTests.chunk(COMPLETION)));
		steps.add(Step.of(0, ProxyStreamingIntegrationTests.done()));
		upstream.stream(steps);
		String body = path.endsWith("chat/completions") ? chat(true) : completion(true);
		assertThat(post(path, body).body()).contains(COMPLETION + "7", "[DONE]");
	}

	/**
	 * Requests tokengap or Reactor Netty refuse, carrying the prompt and the credentials.
	 */
	private void refusedMalformed() {
		String credentials = "Authorization: Bearer " + BEARER + "\r\nx-api-key: " + API_KEY + "\r\napi-key: " + API_KEY
				+ "\r\n";
		String body = chat(false);
		assertThat(RawHttpClient
			.exchange(this.port,
					"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n" + credentials
							+ "Transfer-Encoding: xchunked\r\n\r\n" + body)
			.statuses()).containsExactly(400);
		assertThat(RawHttpClient.exchange(this.port,
				"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n" + credentials + "Transfer-Encoding: chunked\r\n\r\n"
						+ Integer.toHexString(body.length()) + "\r\n" + body + "\r\nzz\r\n\r\n")
			.statuses()).containsExactly(400);
		// Some clients send the key in the query (?key=, as Gemini's OpenAI-compatible
		// API takes it).
		assertThat(RawHttpClient
			.exchange(this.port,
					"POST /v1/chat/completions?key=" + API_KEY + " HTTP/1.1\r\nHost: x\r\n" + credentials
							+ "Content-Length: 1, 2\r\n\r\n" + body)
			.statuses()).containsExactly(400);
		assertThat(RawHttpClient
			.exchange(this.port,
					"GET @" + PROMPT + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + credentials + "\r\n")
			.statuses()).containsExactly(400);
	}

	private String awaitSpikes() {
		return await().atMost(Duration.ofSeconds(15))
			.until(() -> PrometheusText.get(this.managementPort, "/actuator/spikes"),
					(spikes) -> spikes.contains("requestId"));
	}

	/** POSTs JSON with the client's credentials in every header that carries them. */
	private Exchange post(String path, String json) {
		return StreamingClient.at("http://127.0.0.1:" + this.port, Duration.ofSeconds(30))
			.post(path, json, Map.of("Authorization", "Bearer " + BEARER, "x-api-key", API_KEY, "api-key", API_KEY))
			.whole();
	}

	private static String chat(boolean stream) {
		return "{\"model\":\"m-log\",\"stream\":" + stream + ",\"messages\":[{\"role\":\"user\",\"content\":\"" + PROMPT
				+ "\"}]}";
	}

	private static String completion(boolean stream) {
		return "{\"model\":\"m-log\",\"stream\":" + stream + ",\"prompt\":\"" + PROMPT + "\"}";
	}

}
