package dev.tokengap.proxy;

import java.util.HashSet;
import java.util.Set;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The id tokengap gives a request that came without one: 32 lower-case hex digits, as two
 * 64-bit random halves with their top bit set (so neither is ever written shorter).
 */
class RequestIdTests {

	@Test
	void anIdIs32HexDigitsInTwoFullHalves() {
		Set<String> seen = new HashSet<>();
		for (int i = 0; i < 10_000; i++) {
			String id = ProxyExchange.newRequestId();
			assertThat(id).matches("[89a-f][0-9a-f]{15}[89a-f][0-9a-f]{15}");
			seen.add(id);
		}
		assertThat(seen).hasSize(10_000);
	}

	@Test
	void anIdIsTheHexOfItsHalves() {
		String id = ProxyExchange.newRequestId();
		long high = Long.parseUnsignedLong(id.substring(0, 16), 16);
		long low = Long.parseUnsignedLong(id.substring(16), 16);
		assertThat(Long.toHexString(high) + Long.toHexString(low)).isEqualTo(id);
	}

}
