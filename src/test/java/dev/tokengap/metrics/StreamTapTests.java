package dev.tokengap.metrics;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import org.junit.jupiter.api.Test;

import dev.tokengap.testsupport.PrometheusText;
import dev.tokengap.timing.EngineReport;
import dev.tokengap.timing.ResponseTap.Ending;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The measuring seam on a fake clock, told what a transport may tell it in any order:
 * events are timed when their write completed, never when they arrived; a write that
 * completes after the end, an end with nothing written, and a cancel mid-write each leave
 * exactly one outcome and no event that never reached the client.
 */
class StreamTapTests {

	private static final long MS = 1_000_000;

	private final PrometheusRegistry registry = new PrometheusRegistry();

	private final TokengapMeters meters = new TokengapMeters(this.registry, BucketEdges.VLLM_V1, 400 * MS, () -> 0);

	private final ExchangeRecorder recorder = liveRecorder();

	private final StreamTap tap = new StreamTap(this.recorder, true);

	private ExchangeRecorder liveRecorder() {
		ExchangeRecorder r = new ExchangeRecorder(this.meters, 0);
		r.route("m", Endpoint.CHAT_COMPLETIONS);
		r.responded(200);
		r.streamStarted();
		return r;
	}

	@Test
	void timesEachEventWhenItsWriteCompletedNotWhenItArrived() {
		relay("one", 100, 130);
		relay("two", 150, 190);
		relay("[DONE]", 200, 201);
		this.tap.ended(Ending.ENGINE_COMPLETED, 202 * MS);
		close(203);
		PrometheusText metrics = scrape();
		assertThat(metrics.value("tokengap_streams_total", "outcome", "completed")).isEqualTo(1);
		assertThat(metrics.value("tokengap_time_to_first_token_seconds_sum")).isEqualTo(0.13);
		assertThat(metrics.value("tokengap_inter_token_latency_seconds_sum")).as("190 - 130 ms")
			.isEqualTo(0.06, org.assertj.core.data.Offset.offset(1e-9));
		assertThat(metrics.value("tokengap_e2e_request_latency_seconds_sum")).as("ends at the last write")
			.isEqualTo(0.201);
	}

	@Test
	void anEventSplitAcrossTwoBuffersIsTimedByTheWriteOfItsLastByte() {
		String event = data("one");
		received(event.substring(0, 10), 100);
		written(110);
		received(event.substring(10), 150);
		written(160);
		assertThat(this.recorder.timer().contentEvents()).isEqualTo(1);
		assertThat(this.recorder.timer().timeToFirstTokenNanos()).isEqualTo(160 * MS);
	}

	@Test
	void aWriteThatCompletesAfterTheEndTimesNothing() {
		relay("one", 100, 110);
		received(data("two"), 150);
		this.tap.ended(Ending.CLIENT_GONE, 155 * MS);
		written(160);
		close(161);
		assertThat(this.recorder.timer().contentEvents()).as("the second event never counted").isEqualTo(1);
		PrometheusText metrics = scrape();
		assertThat(metrics.value("tokengap_streams_total", "outcome", "client_cancelled")).isEqualTo(1);
		assertThat(metrics.value("tokengap_streams_total")).as("exactly one outcome").isEqualTo(1);
		assertThat(metrics.value("tokengap_inter_token_latency_seconds_count")).isZero();
	}

	@Test
	void anEndWithNothingWrittenIsTheEnginesErrorNotACompletedStream() {
		this.tap.ended(Ending.ENGINE_COMPLETED, 50 * MS);
		close(51);
		PrometheusText metrics = scrape();
		assertThat(metrics.value("tokengap_streams_total", "outcome", "engine_error")).isEqualTo(1);
		assertThat(metrics.value("tokengap_time_to_first_token_seconds_count")).isZero();
		assertThat(metrics.value("tokengap_e2e_request_latency_seconds_sum")).as("ends when the engine ended")
			.isEqualTo(0.05);
	}

	@Test
	void aCancelMidWriteDropsTheEventsInFlight() {
		relay("one", 100, 110);
		received(data("two") + data("three"), 150);
		this.tap.writeStarted(151 * MS);
		this.tap.ended(Ending.CLIENT_GONE, 170 * MS);
		close(171);
		assertThat(this.recorder.timer().contentEvents()).isEqualTo(1);
		assertThat(scrape().value("tokengap_streams_total", "outcome", "client_cancelled")).isEqualTo(1);
	}

	@Test
	void anEngineThatEndsWhileBytesAreStillInFlightDidNotCompleteTheStream() {
		relay("one", 100, 110);
		received(data("two") + "data: [DONE]\n\n", 150);
		this.tap.ended(Ending.ENGINE_COMPLETED, 155 * MS);
		close(156);
		assertThat(scrape().value("tokengap_streams_total", "outcome", "completed")).isZero();
	}

	@Test
	void theFirstEndingSaidIsTheOutcome() {
		relay("one", 100, 110);
		this.tap.ended(Ending.ENGINE_TIMED_OUT, 500 * MS);
		this.tap.ended(Ending.ENGINE_COMPLETED, 501 * MS);
		close(502);
		PrometheusText metrics = scrape();
		assertThat(metrics.value("tokengap_streams_total", "outcome", "upstream_timeout")).isEqualTo(1);
		assertThat(metrics.value("tokengap_streams_total")).isEqualTo(1);
	}

	@Test
	void aFailedWriteOnAnOpenConnectionIsAnUpstreamErrorAndAnEngineFailureToo() {
		assertOutcome(Ending.WRITE_FAILED, "upstream_error");
		assertOutcome(Ending.ENGINE_FAILED, "upstream_error");
	}

	@Test
	void theEnginesReportReachesTheRecorderOnlyOnceItsEventIsWritten() {
		String usage = "data: {\"choices\":[],\"usage\":{\"completion_tokens\":2},\"metrics\":{\"queue_time_ms\":12.3,"
				+ "\"time_to_first_token_ms\":85.2,\"generation_time_ms\":1240.5,\"mean_itl_ms\":9.1,"
				+ "\"num_preemptions\":1}}\n\n";
		relay("one", 100, 110);
		received(usage, 150);
		assertThat(this.recorder.timer().engineReport()).isNull();
		written(151);
		assertThat(this.recorder.timer().engineReport()).isEqualTo(new EngineReport(12.3, 85.2, 1240.5, 9.1, 1));
	}

	@Test
	void aResponseThatIsNotAStreamIsTimedByItsWritesAlone() {
		ExchangeRecorder plain = new ExchangeRecorder(this.meters, 0);
		plain.route("m", Endpoint.OTHER);
		plain.responded(200);
		StreamTap forwarded = new StreamTap(plain, false);
		assertThat(forwarded.readsBytes()).as("asks for no bytes").isFalse();
		assertThat(new StreamTap(liveRecorder(), true).readsBytes()).isTrue();
		forwarded.received(ByteBuffer.allocate(0), 10 * MS);
		forwarded.written(12 * MS);
		forwarded.ended(Ending.ENGINE_COMPLETED, 13 * MS);
		plain.close(14 * MS, false);
		assertThat(plain.timer().contentEvents()).isZero();
		assertThat(scrape().value("tokengap_time_to_first_byte_seconds_sum", "endpoint", "other")).isEqualTo(0.012);
	}

	private void assertOutcome(Ending ending, String outcome) {
		ExchangeRecorder r = liveRecorder();
		StreamTap t = new StreamTap(r, true);
		t.received(bytes(data("one")), 10 * MS);
		t.written(11 * MS);
		t.ended(ending, 20 * MS);
		double before = scrape().value("tokengap_streams_total", "outcome", outcome);
		r.close(21 * MS, false);
		assertThat(scrape().value("tokengap_streams_total", "outcome", outcome) - before).isEqualTo(1);
	}

	private void relay(String content, long arrivedMs, long writtenMs) {
		received(content.equals("[DONE]") ? "data: [DONE]\n\n" : data(content), arrivedMs);
		this.tap.writeStarted(arrivedMs * MS);
		written(writtenMs);
	}

	private void received(String text, long ms) {
		this.tap.received(bytes(text), ms * MS);
	}

	private void written(long ms) {
		this.tap.written(ms * MS);
	}

	private void close(long ms) {
		this.recorder.close(ms * MS, false);
	}

	private static ByteBuffer bytes(String text) {
		ByteBuffer buffer = ByteBuffer.allocate(text.length() + 8);
		buffer.position(3);
		buffer.put(text.getBytes(StandardCharsets.UTF_8));
		buffer.flip().position(3);
		return buffer;
	}

	private static String data(String content) {
		return "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + content + "\"}}]}\n\n";
	}

	private PrometheusText scrape() {
		return PrometheusText.scrape(this.registry);
	}

}
