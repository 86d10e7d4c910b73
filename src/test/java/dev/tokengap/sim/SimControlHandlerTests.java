package dev.tokengap.sim;

import java.util.Map;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

import static dev.tokengap.sim.FastSimulator.CHAT;
import static dev.tokengap.sim.FastSimulator.chatBody;
import static org.assertj.core.api.Assertions.assertThat;

class SimControlHandlerTests extends FreshSimulatorTests {

	@Test
	void traceEndpointGivesOneEntryPerTokenOfTheRequest() {
		this.client.post(CHAT, chatBody("one", 4), Map.of("X-Request-Id", "one"));
		this.client.post(CHAT, chatBody("two", 2), Map.of("X-Request-Id", "two"));
		JsonNode trace = this.client.get("/sim/trace?request=one").json();
		assertThat(trace.isArray()).isTrue();
		assertThat(trace.size()).isEqualTo(4);
		JsonNode first = trace.get(0);
		assertThat(first.propertyNames()).containsExactly("requestId", "tokenIndex", "stepId", "stepStartNanos",
				"stepEndNanos", "stepEndEpochMillis", "stepDurationNanos", "batchSize", "prefillTokensFromOthers",
				"preempted", "injectedStall", "sincePreviousTokenNanos", "waitingForCapacity", "kvCacheUsage",
				"cachedPromptTokens", "newPrefillTokensFromOthers", "recomputeTokensFromOthers", "ownRecomputeTokens",
				"stepStallNanos", "engineWideStall", "fixedCostNanos", "newPrefillCostNanos", "recomputeCostNanos",
				"running");
		assertThat(first.path("requestId").stringValue()).isEqualTo("one");
		assertThat(first.path("tokenIndex").intValue()).isZero();
		assertThat(first.path("stepEndNanos").longValue() - first.path("stepStartNanos").longValue())
			.isEqualTo(first.path("stepDurationNanos").longValue());
		assertThat(trace.get(3).path("tokenIndex").intValue()).isEqualTo(3);
		assertThat(this.client.get("/sim/trace").json().size()).isEqualTo(6);
	}

	@Test
	void faultsCanBeSetReadAndCleared() {
		JsonNode set = this.client.post("/sim/faults", "{\"metricsDelayMs\":5,\"metricsStatus\":503}").json();
		assertThat(set.path("metricsDelayMs").intValue()).isEqualTo(5);
		assertThat(this.client.get("/sim/faults").json().path("metricsStatus").intValue()).isEqualTo(503);
		assertThat(this.client.get("/metrics").status()).isEqualTo(503);
		assertThat(this.client.delete("/sim/faults").json().path("metricsStatus").isNull()).isTrue();
		assertThat(this.client.get("/metrics").status()).isEqualTo(200);
	}

	@Test
	void malformedFaultsAreBadRequest() {
		assertThat(this.client.post("/sim/faults", "{\"metricsDelayMs\":\"soon\"").status()).isEqualTo(400);
	}

}
