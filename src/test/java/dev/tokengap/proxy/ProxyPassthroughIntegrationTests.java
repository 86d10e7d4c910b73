package dev.tokengap.proxy;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.boot.test.context.SpringBootTest;

import dev.tokengap.testsupport.ScriptedUpstream;
import dev.tokengap.testsupport.ScriptedUpstream.Step;
import dev.tokengap.testsupport.ScriptedUpstreamTests;
import dev.tokengap.testsupport.StreamingClient;
import dev.tokengap.testsupport.StreamingClient.Recording;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Byte-exact passthrough of recorded vLLM-style transcripts, however the upstream splits
 * them.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=0", "tokengap.mode=demo" })
class ProxyPassthroughIntegrationTests extends ScriptedUpstreamTests {

	static final List<String> TRANSCRIPTS = List.of("chat-usage.sse", "chat-crlf.sse", "chat-cr.sse",
			"chat-continuous-usage.sse", "chat-reasoning.sse", "chat-tool-calls.sse", "completions.sse",
			"inband-error.sse", "inband-error-legacy.sse", "inband-error-object.sse", "comments-and-fields.sse",
			"multiline-data.sse", "large-content.sse");

	static Stream<String> transcripts() {
		return TRANSCRIPTS.stream();
	}

	@ParameterizedTest
	@MethodSource("transcripts")
	void passesATranscriptThroughUnchangedInOneWrite(String name) {
		byte[] transcript = fixture(name);
		assertPassesThrough(transcript, List.of(transcript));
	}

	@ParameterizedTest
	@MethodSource("transcripts")
	void passesATranscriptThroughUnchangedInSmallWrites(String name) {
		byte[] transcript = fixture(name);
		int size = (transcript.length > 100_000) ? 4096 : 1;
		assertPassesThrough(transcript, slices(transcript, size));
	}

	@Test
	void passesTheCrlfTranscriptThroughWhenSplitAtEveryOffset() {
		byte[] transcript = fixture("chat-crlf.sse");
		for (int offset = 1; offset < transcript.length; offset++) {
			assertPassesThrough(transcript, List.of(Arrays.copyOfRange(transcript, 0, offset),
					Arrays.copyOfRange(transcript, offset, transcript.length)));
		}
	}

	@Test
	void passesAOneMegabyteEventThroughUnchanged() {
		byte[] event = ("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + "y".repeat(1 << 20)
				+ "\"}}]}\n\ndata: [DONE]\n\n")
			.getBytes();
		assertPassesThrough(event, slices(event, 16 * 1024));
	}

	@Test
	void passesMalformedBytesThroughUnchanged() {
		byte[] garbage = new byte[64 * 1024];
		new Random(7).nextBytes(garbage);
		assertPassesThrough(garbage, slices(garbage, 997));
	}

	private void assertPassesThrough(byte[] transcript, List<byte[]> writes) {
		List<Step> steps = new ArrayList<>();
		writes.forEach((bytes) -> steps.add(new Step(java.time.Duration.ZERO, bytes)));
		upstream.stream(steps);
		Recording recording = StreamingClient.record("http://127.0.0.1:" + this.port + "/v1/chat/completions",
				"{\"model\":\"m\",\"stream\":true}");
		assertThat(recording.status()).isEqualTo(200);
		assertThat(recording.headers().get("content-type")).isEqualTo("text/event-stream");
		byte[] received = recording.bytes();
		assertThat(received.length).isEqualTo(transcript.length);
		assertThat(Arrays.equals(received, transcript)).as("bytes identical").isTrue();
	}

	private static List<byte[]> slices(byte[] bytes, int size) {
		List<byte[]> slices = new ArrayList<>();
		for (int i = 0; i < bytes.length; i += size) {
			slices.add(Arrays.copyOfRange(bytes, i, Math.min(bytes.length, i + size)));
		}
		return slices;
	}

	static byte[] fixture(String name) {
		try (InputStream in = ProxyPassthroughIntegrationTests.class.getResourceAsStream("/fixtures/sse/" + name)) {
			assertThat(in).as(name).isNotNull();
			return in.readAllBytes();
		}
		catch (IOException ex) {
			throw new java.io.UncheckedIOException(ex);
		}
	}

}
