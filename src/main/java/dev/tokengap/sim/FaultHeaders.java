package dev.tokengap.sim;

import java.time.Duration;

import io.netty.handler.codec.http.HttpHeaders;

/**
 * Per-request faults and shapes asked for by headers, for tests that need a known cause:
 * <ul>
 * <li>{@code X-Sim-Stall: K:ms}: the HTTP layer holds token K's event for ms while the
 * engine runs on (later tokens queue behind it);</li>
 * <li>{@code X-Sim-Engine-Stall: K:ms[,K:ms...]}: the engine step producing token K lasts
 * ms longer, for every stream in it (several stalls in increasing token order);</li>
 * <li>{@code X-Sim-Reset-After: K}: after token K's event the TCP connection is
 * reset;</li>
 * <li>{@code X-Sim-Error-After: K}: after token K's event the stream ends with the
 * endpoint's in-band error (chat and completions: vLLM's {@code data: {"error": …}} and
 * {@code [DONE]}; responses: {@code response.failed}; messages: {@code event: error}) and
 * the engine sequence is aborted;</li>
 * <li>{@code X-Sim-Error-Before-First: true}: an error raised before the first token,
 * which vLLM drops (PR #40986): chat sends the role prelude and {@code [DONE]},
 * completions only {@code [DONE]}, responses end after {@code response.in_progress},
 * messages send {@code event: error};</li>
 * <li>{@code X-Sim-Reasoning-Tokens: N}: the first N output tokens are reasoning,
 * overriding {@code tokengap.sim.reasoning-share}.</li>
 * </ul>
 * Token indexes are 0-based; -1 means "not asked for".
 */
record FaultHeaders(int httpStallToken, Duration httpStall, int[] engineStallTokens, long[] engineStallNanos,
		int resetAfterToken, int errorAfterToken, boolean errorBeforeFirst, int reasoningTokens) {

	static final String HTTP_STALL = "X-Sim-Stall";

	static final String ENGINE_STALL = "X-Sim-Engine-Stall";

	static final String RESET_AFTER = "X-Sim-Reset-After";

	static final String ERROR_AFTER = "X-Sim-Error-After";

	static final String ERROR_BEFORE_FIRST = "X-Sim-Error-Before-First";

	static final String REASONING_TOKENS = "X-Sim-Reasoning-Tokens";

	static final FaultHeaders NONE = new FaultHeaders(-1, Duration.ZERO, new int[0], new long[0], -1, -1, false, -1);

	static FaultHeaders from(HttpHeaders headers) {
		String http = headers.get(HTTP_STALL);
		String engine = headers.get(ENGINE_STALL);
		String reset = headers.get(RESET_AFTER);
		String errorAfter = headers.get(ERROR_AFTER);
		String errorBeforeFirst = headers.get(ERROR_BEFORE_FIRST);
		String reasoning = headers.get(REASONING_TOKENS);
		if (http == null && engine == null && reset == null && errorAfter == null && errorBeforeFirst == null
				&& reasoning == null) {
			return NONE;
		}
		int[] httpStall = tokenAndMillis(HTTP_STALL, http);
		String[] engineStalls = (engine != null) ? engine.split(",") : new String[0];
		int[] stallTokens = new int[engineStalls.length];
		long[] stallNanos = new long[engineStalls.length];
		for (int i = 0; i < engineStalls.length; i++) {
			int[] stall = tokenAndMillis(ENGINE_STALL, engineStalls[i]);
			if (i > 0 && stall[0] <= stallTokens[i - 1]) {
				throw InvalidRequestException.badRequest(ENGINE_STALL + " lists its tokens in increasing order");
			}
			stallTokens[i] = stall[0];
			stallNanos[i] = Duration.ofMillis(stall[1]).toNanos();
		}
		return new FaultHeaders(httpStall[0], Duration.ofMillis(httpStall[1]), stallTokens, stallNanos,
				optionalNumber(RESET_AFTER, reset), optionalNumber(ERROR_AFTER, errorAfter),
				flag(ERROR_BEFORE_FIRST, errorBeforeFirst), optionalNumber(REASONING_TOKENS, reasoning));
	}

	boolean holdsToken(int index) {
		return index == this.httpStallToken;
	}

	boolean resets() {
		return this.resetAfterToken >= 0;
	}

	/**
	 * The token after whose event the stream is cut (reset or in-band error), or -1.
	 */
	int cutAfterToken() {
		return resets() ? this.resetAfterToken : this.errorAfterToken;
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

	private static int optionalNumber(String header, String value) {
		return (value != null) ? number(header, value.trim()) : -1;
	}

	private static boolean flag(String header, String value) {
		if (value == null || value.trim().equalsIgnoreCase("false")) {
			return false;
		}
		if (value.trim().equalsIgnoreCase("true")) {
			return true;
		}
		throw InvalidRequestException.badRequest(header + " must be true or false, got '" + value + "'");
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
