package dev.tokengap.proxy;

import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The header copy's rules, in place; {@link HopByHopIntegrationTests} has them through
 * the proxy.
 */
class HopByHopHeadersTests {

	private static final HopByHopHeaders COPY = HopByHopHeaders.andAlso("x-request-id");

	@Test
	void aConnectionListNamesAHeaderIgnoringCaseAndBlanks() {
		assertThat(dropsXSecret("keep-alive, X-Secret")).isTrue();
		assertThat(dropsXSecret("X-SECRET")).isTrue();
		assertThat(dropsXSecret("close ,\tx-secret\t ,keep-alive")).isTrue();
		assertThat(dropsXSecret("close,,x-secret,")).isTrue();
		assertThat(dropsXSecret("x-secret")).isTrue();
	}

	@Test
	void aConnectionListNamesOnlyWholeNames() {
		assertThat(dropsXSecret("x-secret-2, keep-alive")).isFalse();
		assertThat(dropsXSecret("x-sec")).isFalse();
		assertThat(dropsXSecret("x-se cret")).isFalse();
		assertThat(dropsXSecret("")).isFalse();
		assertThat(dropsXSecret(", ,")).isFalse();
		assertThat(copied("x-secret", "X-Sec")).containsEntry("X-Sec", "v");
	}

	private static boolean dropsXSecret(String connection) {
		return !copied(connection, "X-Secret").containsKey("X-Secret");
	}

	private static java.util.Map<String, String> copied(String connection, String header) {
		HttpHeaders from = new DefaultHttpHeaders().add("Connection", connection).add(header, "v");
		HttpHeaders to = new DefaultHttpHeaders();
		COPY.copy(from, to);
		java.util.Map<String, String> result = new java.util.HashMap<>();
		to.forEach((entry) -> result.put(entry.getKey(), entry.getValue()));
		return result;
	}

	@Test
	void copiesEndToEndHeadersAndLeavesOutHopByHopOnesAndThoseEveryConnectionLineNames() {
		HttpHeaders from = new DefaultHttpHeaders().add("Host", "engine")
			.add("Connection", "keep-alive, X-Hop-One")
			.add("connection", "x-hop-two")
			.add("X-Hop-One", "1")
			.add("X-HOP-TWO", "2")
			.add("Keep-Alive", "timeout=5")
			.add("Transfer-Encoding", "chunked")
			.add("TE", "trailers")
			.add("X-Request-Id", "theirs")
			.add("Authorization", "Bearer k")
			.add("Accept", "text/event-stream")
			.add("Accept", "application/json")
			.add("X-Hop-One-More", "kept");
		HttpHeaders to = new DefaultHttpHeaders();
		COPY.copy(from, to);
		assertThat(to.names()).containsExactlyInAnyOrder("Host", "Authorization", "Accept", "X-Hop-One-More");
		assertThat(to.getAll("Accept")).containsExactly("text/event-stream", "application/json");
		assertThat(to.get("Authorization")).isEqualTo("Bearer k");
	}

	@Test
	void copiesEverythingEndToEndWhenNoConnectionHeaderIsThere() {
		HttpHeaders from = new DefaultHttpHeaders().add("Content-Type", "application/json").add("X-Custom", "v");
		HttpHeaders to = new DefaultHttpHeaders();
		COPY.copy(from, to);
		assertThat(to.names()).containsExactlyInAnyOrder("Content-Type", "X-Custom");
	}

}
