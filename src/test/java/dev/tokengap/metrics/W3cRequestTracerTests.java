package dev.tokengap.metrics;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The trace context tokengap sends the engine: the client's trace under tokengap's own
 * span id, or a new trace sampled at the set ratio.
 */
class W3cRequestTracerTests {

	static final String TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";

	static final String CLIENT = "00-" + TRACE + "-00f067aa0ba902b7-01";

	@Test
	void keepsTheClientsTraceIdFlagAndStateUnderANewParentId() {
		RequestTrace trace = new W3cRequestTracer(0).start(CLIENT, "vendor=abc,other=1");
		assertThat(trace.traceId()).isEqualTo(TRACE);
		assertThat(trace.spanId()).matches("[0-9a-f]{16}").isNotEqualTo("00f067aa0ba902b7");
		assertThat(trace.traceparent()).isEqualTo("00-" + TRACE + "-" + trace.spanId() + "-01");
		assertThat(trace.sampled()).isTrue();
		assertThat(trace.tracestate()).isEqualTo("vendor=abc,other=1");
	}

	@Test
	void keepsAnUnsampledClientTraceUnsampled() {
		RequestTrace trace = new W3cRequestTracer(1).start("00-" + TRACE + "-00f067aa0ba902b7-00", null);
		assertThat(trace.sampled()).isFalse();
		assertThat(trace.traceparent()).endsWith("-00");
		assertThat(trace.tracestate()).isNull();
	}

	@Test
	void startsANewTraceForAnInvalidHeaderAndDropsItsState() {
		RequestTrace trace = new W3cRequestTracer(1).start("00-" + TRACE.toUpperCase() + "-00f067aa0ba902b7-01",
				"vendor=abc");
		assertThat(trace.traceId()).matches("[0-9a-f]{32}").isNotEqualTo(TRACE);
		assertThat(TraceParent.isValid(trace.traceparent())).isTrue();
		assertThat(trace.sampled()).isTrue();
		assertThat(trace.tracestate()).isNull();
	}

	@Test
	void samplesNewTracesAtTheSetRatio() {
		assertThat(new W3cRequestTracer(0).start(null, null).sampled()).isFalse();
		assertThat(new W3cRequestTracer(1).start(null, null).sampled()).isTrue();
		W3cRequestTracer half = new W3cRequestTracer(0.5);
		int sampled = 0;
		for (int i = 0; i < 10_000; i++) {
			sampled += half.start(null, null).sampled() ? 1 : 0;
		}
		// 10 000 draws at one half: 4 700 to 5 300 is over six standard deviations wide
		assertThat(sampled).isBetween(4_700, 5_300);
	}

	@Test
	void refusesARatioOutsideZeroToOne() {
		assertThatIllegalArgumentException().isThrownBy(() -> new W3cRequestTracer(1.5));
		assertThatIllegalArgumentException().isThrownBy(() -> new W3cRequestTracer(Double.NaN));
	}

}
