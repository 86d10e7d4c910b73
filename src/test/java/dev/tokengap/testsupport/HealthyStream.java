package dev.tokengap.testsupport;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.tokengap.testsupport.ScriptedUpstream.Step;
import dev.tokengap.testsupport.StreamingClient.Recording;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A well-behaved stream through tokengap while a fault test hurts another exchange: the
 * scripted upstream answers {@link #PATH} with {@value #EVENTS} events 50 ms apart and
 * {@code [DONE]}, and the client must get every byte of it, cleanly ended.
 */
public final class HealthyStream {

	/** The path the healthy stream uses; fault scripts answer the other paths. */
	public static final String PATH = "/v1/completions";

	static final int EVENTS = 20;

	private final CompletableFuture<Recording> recording;

	private HealthyStream(CompletableFuture<Recording> recording) {
		this.recording = recording;
	}

	/**
	 * Scripts {@link #PATH} on the upstream; call after {@link ScriptedUpstream#handle},
	 * which drops routes.
	 * @param upstream the engine tokengap proxies to
	 */
	public static void script(ScriptedUpstream upstream) {
		upstream.route(PATH, (req, res) -> ScriptedUpstream.play(res, steps(), (nanos) -> {
		}));
	}

	/**
	 * Starts the stream through tokengap.
	 * @param port tokengap's proxy port
	 * @param model the model label to count it under
	 * @return the stream in flight
	 */
	public static HealthyStream start(int port, String model) {
		return new HealthyStream(CompletableFuture.supplyAsync(() -> StreamingClient
			.record("http://127.0.0.1:" + port + PATH, "{\"model\":\"" + model + "\",\"stream\":true}")));
	}

	/** Waits for the stream and asserts that it arrived whole and ended cleanly. */
	public void assertWhole() throws Exception {
		Recording whole = this.recording.get(Duration.ofSeconds(30).toMillis(), TimeUnit.MILLISECONDS);
		assertThat(whole.status()).as("healthy stream status").isEqualTo(200);
		assertThat(whole.failure()).as("the healthy stream ended cleanly").isNull();
		assertThat(whole.text()).as("the healthy stream arrived whole").isEqualTo(expected());
	}

	private static List<Step> steps() {
		List<Step> steps = new ArrayList<>();
		for (int i = 0; i < EVENTS; i++) {
			steps.add(Step.of(50, event(i)));
		}
		steps.add(Step.of(0, "data: [DONE]\n\n"));
		return steps;
	}

	private static String expected() {
		StringBuilder text = new StringBuilder();
		steps().forEach((step) -> text.append(new String(step.bytes(), java.nio.charset.StandardCharsets.UTF_8)));
		return text.toString();
	}

	private static String event(int i) {
		return "data: {\"choices\":[{\"index\":0,\"text\":\"t" + i + "\"}]}\n\n";
	}

}
