package dev.tokengap.metrics;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The outcome rules of the metrics contract, as a table.
 */
class StreamOutcomeTests {

	@ParameterizedTest
	@CsvSource({ "false, true, 3, COMPLETED", "true, true, 3, ENGINE_ERROR", "false, true, 0, ENGINE_ERROR",
			"false, false, 3, ENGINE_ERROR", "true, false, 0, ENGINE_ERROR" })
	void aCleanlyEndedBodyIsCompletedOnlyAtItsGoodEndWithContentAndNoFailure(boolean failed, boolean reachedEnd,
			int content, StreamOutcome expected) {
		assertThat(StreamOutcome.ofBody(failed, reachedEnd, content)).isEqualTo(expected);
	}

	@ParameterizedTest
	@CsvSource({ "200, ", "204, ", "400, INVALID", "401, INVALID", "404, INVALID", "413, INVALID", "429, REJECTED",
			"500, REJECTED", "501, REJECTED", "503, REJECTED" })
	void theEnginesStatusRefusesOrLeavesItToTheBody(int status, StreamOutcome expected) {
		assertThat(StreamOutcome.ofEngineStatus(status)).isEqualTo(expected);
	}

	@ParameterizedTest
	@CsvSource({ "502, UPSTREAM_ERROR", "504, UPSTREAM_TIMEOUT", "503, REJECTED", "413, INVALID", "400, INVALID",
			"431, INVALID", "500, UPSTREAM_ERROR" })
	void tokengapsOwnAnswersHaveTheirOutcome(int status, StreamOutcome expected) {
		assertThat(StreamOutcome.ofProxyAnswer(status)).isEqualTo(expected);
	}

}
