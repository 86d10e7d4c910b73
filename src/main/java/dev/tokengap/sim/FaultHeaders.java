package dev.tokengap.sim;

import java.time.Duration;

import io.netty.handler.codec.http.HttpHeaders;

/**
 * Per-request faults asked for by headers, for tests that need a known cause:
 * <ul>
 * <li>{@code X-Sim-Stall: K:ms}: the HTTP layer holds token K's event for ms while the
 * engine runs on (later tokens queue behind it);</li>
 * <li>{@code X-Sim-Engine-Stall: K:ms}: the engine step producing token K lasts ms
 * longer, for every stream in it;</li>
 * <li>{@code X-Sim-Reset-After: K}: after token K's event the TCP connection is
 * reset.</li>
 * </ul>
 * Token indexes are 0-based; -1 means "not asked for".
 */
record FaultHeaders(int httpStallToken, Duration httpStall, int engineStallToken, Duration engineStall,
		int resetAfterToken) {

	static final String HTTP_STALL = "X-Sim-Stall";

	static final String ENGINE_STALL = "X-Sim-Engine-Stall";

	static final String RESET_AFTER = "X-Sim-Reset-After";

	static final FaultHeaders NONE = new FaultHeaders(-1, Duration.ZERO, -1, Duration.ZERO, -1);

	static FaultHeaders from(HttpHeaders headers) {
		String http = headers.get(HTTP_STALL);
		String engine = headers.get(ENGINE_STALL);
		String reset = headers.get(RESET_AFTER);
		if (http == null && engine == null && reset == null) {
			return NONE;
		}
		int[] httpStall = tokenAndMillis(HTTP_STALL, http);
		int[] engineStall = tokenAndMillis(ENGINE_STALL, engine);
		int resetAfter = (reset != null) ? number(RESET_AFTER, reset.trim()) : -1;
		return new FaultHeaders(httpStall[0], Duration.ofMillis(httpStall[1]), engineStall[0],
				Duration.ofMillis(engineStall[1]), resetAfter);
	}

	boolean holdsToken(int index) {
		return index == this.httpStallToken;
	}

	boolean resets() {
		return this.resetAfterToken >= 0;
	}

	private static int[] tokenAndMillis(String header, String value) {
		if (value == null) {
			return new int[] { -1, 0 };
		}
		int colon = value.indexOf(':');
		if (colon < 0) {
			throw InvalidRequestException.badRequest(header + " must be <token index>:<milliseconds>");
		}
		return new int[] { number(header, value.substring(0, colon).trim()),
				number(header, value.substring(colon + 1).trim()) };
	}

	private static int number(String header, String text) {
		try {
			int value = Integer.parseInt(text);
			if (value >= 0) {
				return value;
			}
		}
		catch (NumberFormatException ex) {
			// answered below
		}
		throw InvalidRequestException.badRequest(header + " needs non-negative integers, got '" + text + "'");
	}

}
