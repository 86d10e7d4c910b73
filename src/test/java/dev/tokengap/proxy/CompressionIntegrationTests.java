package dev.tokengap.proxy;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.zip.GZIPInputStream;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;

import dev.tokengap.testsupport.PrometheusText;
import dev.tokengap.testsupport.ScriptedUpstream.Step;
import dev.tokengap.testsupport.ScriptedUpstreamTests;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A proxy port with {@code server.compression.enabled}: Spring Boot's server compresses
 * what the client accepts gzip for, and every byte of the body, a stream's events
 * included, must go through the compressor. The relay writes body buffers past the
 * handlers that only watch a response's head and end; the compressor is not one of them,
 * and a body that bypassed it would reach the client raw under a
 * {@code content-encoding: gzip} head.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=0", "server.compression.enabled=true",
				"server.compression.min-response-size=1",
				"server.compression.mime-types=application/json,text/event-stream",
				"tokengap.metrics.models=m-gzip,m-gzip-stream" })
class CompressionIntegrationTests extends ScriptedUpstreamTests {

	private final HttpClient client = HttpClient.newHttpClient();

	@Test
	void aCompressedAnswerDecodesToTheEnginesBody() throws Exception {
		String body = "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"choices\":[{\"index\":0,"
				+ "\"message\":{\"role\":\"assistant\",\"content\":\"" + "tok ".repeat(600) + "\"}}]}";
		upstream.respond(200, "application/json", body);
		HttpResponse<byte[]> response = post("{\"model\":\"m-gzip\",\"messages\":[]}");
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(response.headers().firstValue("content-encoding")).hasValue("gzip");
		assertThat(gunzip(response.body())).isEqualTo(body);
	}

	@Test
	void aCompressedStreamDecodesToTheEnginesEventsAndCompletes() throws Exception {
		List<String> events = List.of(
				"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n",
				"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"one\"}}]}\n\n",
				"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"two\"}}]}\n\n",
				"data: [DONE]\n\n");
		upstream.stream(events.stream().map((event) -> Step.of(10, event)).toList());
		HttpResponse<byte[]> response = post(
				"{\"model\":\"m-gzip-stream\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(response.headers().firstValue("content-encoding")).hasValue("gzip");
		assertThat(gunzip(response.body())).isEqualTo(String.join("", events));
		PrometheusText metrics = PrometheusText.scrape(this.managementPort);
		assertThat(metrics.value("tokengap_streams_total", "model_name", "m-gzip-stream", "outcome", "completed"))
			.isEqualTo(1);
	}

	private HttpResponse<byte[]> post(String json) throws Exception {
		return this.client
			.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/v1/chat/completions"))
				.header("content-type", "application/json")
				.header("accept-encoding", "gzip")
				.POST(HttpRequest.BodyPublishers.ofString(json))
				.build(), HttpResponse.BodyHandlers.ofByteArray());
	}

	private static String gunzip(byte[] bytes) {
		try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(bytes))) {
			return new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("not a gzip body: " + new String(bytes, StandardCharsets.UTF_8), ex);
		}
	}

}
