package dev.tokengap.proxy;

import io.netty.handler.codec.http.HttpHeaders;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;

import dev.tokengap.testsupport.RawHttpClient;
import dev.tokengap.testsupport.ScriptedUpstreamTests;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The W3C trace context reaches the engine: the client's trace id and sampled flag under
 * tokengap's own parent id, its {@code tracestate} unchanged; a request without a valid
 * {@code traceparent} gets a new trace, sampled as {@code tokengap.tracing.sample-ratio}
 * says (none here).
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=0", "tokengap.mode=demo", "tokengap.tracing.sample-ratio=0" })
class TraceContextIntegrationTests extends ScriptedUpstreamTests {

	static final String TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";

	static final String CLIENT_PARENT = "00f067aa0ba902b7";

	@Test
	void theEngineGetsTheClientsTraceUnderTokengapsParentId() {
		HttpHeaders received = forward("/v1/chat/completions?trace=client", "traceparent: 00-" + TRACE + "-"
				+ CLIENT_PARENT + "-01\r\n" + "tracestate: vendor=abc\r\ntracestate: other=1\r\n");
		assertThat(received.getAll("traceparent")).singleElement()
			.asString()
			.matches("00-" + TRACE + "-[0-9a-f]{16}-01")
			.doesNotContain(CLIENT_PARENT);
		assertThat(String.join(",", received.getAll("tracestate"))).isEqualTo("vendor=abc,other=1");
	}

	@Test
	void aRequestWithoutTraceContextGetsANewTrace() {
		HttpHeaders first = forward("/v1/chat/completions?trace=none-1", "");
		HttpHeaders second = forward("/v1/chat/completions?trace=none-2", "");
		String one = first.get("traceparent");
		String two = second.get("traceparent");
		assertThat(one).matches("00-[0-9a-f]{32}-[0-9a-f]{16}-00");
		assertThat(two).matches("00-[0-9a-f]{32}-[0-9a-f]{16}-00");
		assertThat(one.substring(3, 35)).isNotEqualTo(two.substring(3, 35));
		assertThat(first.contains("tracestate")).isFalse();
	}

	@Test
	void anInvalidTraceparentIsANewTraceAndItsStateIsDropped() {
		HttpHeaders received = forward("/v1/chat/completions?trace=invalid",
				"traceparent: 00-" + TRACE.toUpperCase() + "-" + CLIENT_PARENT + "-01\r\ntracestate: vendor=abc\r\n");
		assertThat(received.getAll("traceparent")).singleElement()
			.asString()
			.matches("00-[0-9a-f]{32}-[0-9a-f]{16}-00")
			.doesNotContainIgnoringCase(TRACE);
		assertThat(received.contains("tracestate")).isFalse();
	}

	private HttpHeaders forward(String target, String headers) {
		upstream.respond(200, "application/json", "{}");
		RawHttpClient.Response response = RawHttpClient.exchange(this.port,
				"POST " + target + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + headers
						+ "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}");
		assertThat(response.statuses()).as(response.text()).containsExactly(200);
		return upstream.received()
			.stream()
			.filter((received) -> received.uri().endsWith(target))
			.findFirst()
			.orElseThrow()
			.headers();
	}

}
