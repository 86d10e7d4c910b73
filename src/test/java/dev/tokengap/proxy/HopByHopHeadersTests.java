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
		assertThat(HopByHopHeaders.named("keep-alive, X-Secret", "x-secret")).isTrue();
		assertThat(HopByHopHeaders.named("X-SECRET", "x-Secret")).isTrue();
		assertThat(HopByHopHeaders.named(" \tx-secret\t ,close", "X-Secret")).isTrue();
		assertThat(HopByHopHeaders.named("close,,x-secret,", "x-secret")).isTrue();
		assertThat(HopByHopHeaders.named("x-secret", "x-secret")).isTrue();
	}

	@Test
	void aConnectionListNamesOnlyWholeNames() {
		assertThat(HopByHopHeaders.named("x-secret", "x-sec")).isFalse();
		assertThat(HopByHopHeaders.named("x-sec", "x-secret")).isFalse();
		assertThat(HopByHopHeaders.named("x-secret-2, keep-alive", "x-secret")).isFalse();
		assertThat(HopByHopHeaders.named("x-se cret", "x-secret")).isFalse();
		assertThat(HopByHopHeaders.named("", "x-secret")).isFalse();
		assertThat(HopByHopHeaders.named(" , ,", "x-secret")).isFalse();
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
