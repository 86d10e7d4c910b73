package dev.tokengap.proxy;

import java.time.Duration;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.test.context.SpringBootTest;

import dev.tokengap.testsupport.PrometheusText;
import dev.tokengap.testsupport.RawHttpClient;
import dev.tokengap.testsupport.ScriptedUpstream;
import dev.tokengap.testsupport.ScriptedUpstreamTests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * tokengap is no open proxy: whatever host a request names (absolute-form target,
 * {@code Host}, {@code X-Forwarded-Host}, a path that looks like an authority), it
 * reaches only the configured engine. The "foreign" host is a second scripted upstream on
 * loopback that must receive nothing.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=0", "tokengap.mode=demo" })
class OpenProxyIntegrationTests extends ScriptedUpstreamTests {

	static final ScriptedUpstream foreign = ScriptedUpstream.start();

	String foreignHost;

	@BeforeEach
	void script() {
		upstream.respond(200, "application/json", "{}");
		foreign.respond(200, "application/json", "{\"foreign\":true}");
		this.foreignHost = "127.0.0.1:" + foreign.port();
	}

	@AfterAll
	static void closeForeign() {
		foreign.close();
	}

	@Test
	void forwardsAnAbsoluteFormRequestToTheEngineWithOnlyItsPathAndQuery() {
		RawHttpClient.Response response = send("GET http://" + this.foreignHost + "/latest/meta-data?x=1 HTTP/1.1\r\n"
				+ "Host: " + this.foreignHost + "\r\n");
		assertThat(response.statuses()).containsExactly(200);
		assertThat(response.firstBody()).isEqualTo("{}");
		assertThat(upstream.received()).extracting(ScriptedUpstream.Received::uri)
			.containsExactly("/latest/meta-data?x=1");
		assertThat(upstream.received().get(0).headers().get("host")).isEqualTo("127.0.0.1:" + upstream.port());
		assertThat(foreign.received()).isEmpty();
	}

	@Test
	void forwardsToTheEngineWhateverHostTheHostHeaderNames() {
		RawHttpClient.Response response = send("GET /v1/models/x HTTP/1.1\r\nHost: " + this.foreignHost + "\r\n");
		assertThat(response.statuses()).containsExactly(200);
		assertThat(upstream.received("/v1/models/x")).hasSize(1);
		assertThat(upstream.received("/v1/models/x").get(0).headers().get("host"))
			.isEqualTo("127.0.0.1:" + upstream.port());
		assertThat(foreign.received()).isEmpty();
	}

	@Test
	void forwardsToTheEngineWhateverHostXForwardedHostNames() {
		RawHttpClient.Response response = send("GET /v1/x HTTP/1.1\r\nHost: x\r\nX-Forwarded-Host: " + this.foreignHost
				+ "\r\nForwarded: host=" + this.foreignHost + "\r\n");
		assertThat(response.statuses()).containsExactly(200);
		assertThat(upstream.received("/v1/x")).hasSize(1);
		assertThat(foreign.received()).isEmpty();
	}

	@ParameterizedTest
	@ValueSource(strings = { "//127.0.0.1:FOREIGN/x", "///127.0.0.1:FOREIGN/x", "/..%2f..%2fx", "/../../x",
			"/%2e%2e/%2e%2e/x", "/@127.0.0.1:FOREIGN/x", "/v1/x?url=http://127.0.0.1:FOREIGN/" })
	void keepsPathsThatLookLikeAuthoritiesOrTraversalsOnTheEngineUnchanged(String target) {
		String path = target.replace("FOREIGN", Integer.toString(foreign.port()));
		RawHttpClient.Response response = send("GET " + path + " HTTP/1.1\r\nHost: x\r\n");
		assertThat(response.statuses()).containsExactly(200);
		assertThat(upstream.received()).extracting(ScriptedUpstream.Received::uri).containsExactly(path);
		assertThat(foreign.received()).isEmpty();
	}

	@ParameterizedTest
	@ValueSource(strings = { "/v1/{x}", "/v1/a|b", "/v1/%zz", "/v1/a^b", "/v1/chat/completions%7", "/v1/a\\b" })
	void forwardsTargetsThatJavaNetUriRefusesAndReturnsTheEnginesAnswer(String target) {
		upstream.respond(404, "application/json", "{\"detail\":\"Not Found\"}");
		String[] counted = { "endpoint", "other", "status", "404" };
		double before = PrometheusText.scrape(this.managementPort).value("tokengap_requests_total", counted);
		RawHttpClient.Response response = send("GET " + target + " HTTP/1.1\r\nHost: x\r\n");
		assertThat(response.statuses()).containsExactly(404);
		assertThat(response.firstBody()).isEqualTo("{\"detail\":\"Not Found\"}");
		assertThat(upstream.received()).extracting(ScriptedUpstream.Received::uri).containsExactly(target);
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(
					PrometheusText.scrape(this.managementPort).value("tokengap_requests_total", counted))
				.isEqualTo(before + 1));
	}

	@Test
	void labelsAnEscapedPathByTheEndpointItDecodesTo() {
		String[] counted = { "endpoint", "chat_completions", "status", "200" };
		double before = PrometheusText.scrape(this.managementPort).value("tokengap_requests_total", counted);
		RawHttpClient.Response response = send("GET /v1/chat%2Fcompletions?x=%zz HTTP/1.1\r\nHost: x\r\n");
		assertThat(response.statuses()).containsExactly(200);
		assertThat(upstream.received()).extracting(ScriptedUpstream.Received::uri)
			.containsExactly("/v1/chat%2Fcompletions?x=%zz");
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(
					PrometheusText.scrape(this.managementPort).value("tokengap_requests_total", counted))
				.isEqualTo(before + 1));
	}

	@ParameterizedTest
	@ValueSource(strings = { "GET @127.0.0.1:FOREIGN/x", "GET :FOREIGN/x", "GET .localhost/x", "GET x", "OPTIONS *",
			"CONNECT 127.0.0.1:FOREIGN" })
	void refusesTargetsThatAreNeitherPathsNorAbsoluteUrlsWith400(String line) {
		String requestLine = line.replace("FOREIGN", Integer.toString(foreign.port()));
		RawHttpClient.Response response = send(requestLine + " HTTP/1.1\r\nHost: " + this.foreignHost + "\r\n");
		assertThat(response.statuses()).containsExactly(400);
		assertThat(response.firstBody()).contains("\"type\":\"BadRequestError\"", "\"code\":400");
		assertThat(upstream.received()).isEmpty();
		assertThat(foreign.received()).isEmpty();
	}

	@Test
	void countsARefusedTargetAsA400() {
		String[] refused = { "endpoint", "other", "status", "400" };
		double before = PrometheusText.scrape(this.managementPort).value("tokengap_requests_total", refused);
		assertThat(send("CONNECT " + this.foreignHost + " HTTP/1.1\r\nHost: " + this.foreignHost + "\r\n").statuses())
			.containsExactly(400);
		// counted when the exchange closes,
		// which may be just after the client has its answer
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(
					PrometheusText.scrape(this.managementPort).value("tokengap_requests_total", refused))
				.isEqualTo(before + 1));
	}

	private RawHttpClient.Response send(String head) {
		return RawHttpClient.exchange(this.port, head + "Connection: close\r\n\r\n");
	}

}
