package dev.tokengap.metrics;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import org.junit.jupiter.api.Test;

import dev.tokengap.testsupport.PrometheusText;
import dev.tokengap.timing.ContentWrite;
import dev.tokengap.timing.GapObserver;
import dev.tokengap.timing.StreamTimer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One exchange's recording on a real registry with made-up times: every streamed request
 * gets exactly one outcome at the single exit, whatever its call sites said or failed to
 * say.
 */
class ExchangeRecorderTests {

	private static final long MS = 1_000_000;

	private final PrometheusRegistry registry = new PrometheusRegistry();

	private long now;

	private final TokengapMeters meters = new TokengapMeters(this.registry, BucketEdges.VLLM_V1, 400 * MS,
			() -> this.now);

	private final ExchangeRecorder recorder = newRecorder();

	/** The times of the event being written, reused as the relay reuses its own. */
	private final ContentWrite event = new ContentWrite();

	private ExchangeRecorder newRecorder() {
		ExchangeRecorder r = new ExchangeRecorder(this.meters, 0);
		r.route("m", Endpoint.CHAT_COMPLETIONS);
		return r;
	}

	@Test
	void aCompletedStreamIsCountedOnceWithItsSummaryAndLeavesTheLiveSet() {
		this.recorder.streamStarted();
		this.recorder.responded(200);
		assertThat(scrape().value("tokengap_inflight_streams")).isEqualTo(1);
		for (int i = 0; i < 12; i++) {
			this.event.setArrivalNanos((100 + 20 * i) * MS);
			this.event.setWriteStartNanos((100 + 20 * i) * MS);
			this.event.setWriteNanos((101 + 20 * i) * MS);
			this.recorder.contentWritten(0, this.event);
		}
		this.recorder.completed(400 * MS);
		this.recorder.outcome(StreamOutcome.ofBody(false, true, this.recorder.timer().contentEvents()));
		this.recorder.close(401 * MS, false);
		this.recorder.close(402 * MS, true);
		PrometheusText metrics = scrape();
		assertThat(metrics.value("tokengap_streams_total", "outcome", "completed")).isEqualTo(1);
		assertThat(metrics.value("tokengap_streams_total")).isEqualTo(1);
		assertThat(metrics.value("tokengap_smooth_streams_total")).isEqualTo(1);
		assertThat(metrics.value("tokengap_requests_total", "status", "200")).isEqualTo(1);
		assertThat(metrics.value("tokengap_inflight_streams")).isZero();
		assertThat(metrics.value("tokengap_inter_token_latency_seconds_count")).isEqualTo(11);
		assertThat(metrics.value("tokengap_stream_p99_gap_seconds_count")).isEqualTo(1);
		assertThat(metrics.value("tokengap_stream_p99_gap_seconds_bucket", "le", "0.01")).isZero();
		assertThat(metrics.value("tokengap_stream_p99_gap_seconds_bucket", "le", "0.025")).isEqualTo(1);
		assertThat(metrics.value("tokengap_e2e_request_latency_seconds_sum")).isEqualTo(0.4);
	}

	@Test
	void theTraceIdReachesTheTimerAndTheTraceIsToldOnceOfTheOutcome() {
		java.util.List<StreamOutcome> ended = new java.util.ArrayList<>();
		RequestTrace started = new W3cRequestTracer(1).start(null, null);
		RequestTrace trace = new RequestTrace() {

			@Override
			public String traceId() {
				return started.traceId();
			}

			@Override
			public String spanId() {
				return started.spanId();
			}

			@Override
			public boolean sampled() {
				return true;
			}

			@Override
			public String traceparent() {
				return started.traceparent();
			}

			@Override
			public String tracestate() {
				return null;
			}

			@Override
			public void ended(ExchangeRecorder exchange) {
				ended.add(exchange.streamOutcome());
			}

		};
		this.recorder.trace(trace);
		assertThat(this.recorder.timer().traceId()).isEqualTo(started.traceId());
		this.recorder.streamStarted();
		this.recorder.responded(200);
		this.recorder.close(10 * MS, true);
		this.recorder.close(11 * MS, true);
		assertThat(ended).containsExactly(StreamOutcome.CLIENT_CANCELLED);
		assertThat(this.recorder.status()).isEqualTo(200);
		assertThat(this.recorder.model()).isEqualTo("m");
	}

	/**
	 * The response timeout can fire just after the headers went out, before any relay:
	 * nobody says an outcome, and the exit still takes the stream out of the live set and
	 * counts it.
	 */
	@Test
	void aStreamThatNobodyEndedIsStillCountedAndLeavesTheLiveSetAtTheExit() {
		this.recorder.streamStarted();
		this.recorder.responded(200);
		this.recorder.close(10 * MS, false);
		PrometheusText metrics = scrape();
		assertThat(metrics.value("tokengap_inflight_streams")).isZero();
		assertThat(metrics.value("tokengap_streams_total", "outcome", "upstream_error")).isEqualTo(1);
		assertThat(metrics.value("tokengap_requests_total", "status", "200")).isEqualTo(1);
		assertThat(metrics.value("tokengap_e2e_request_latency_seconds_count")).isZero();
	}

	/**
	 * An error answer whose write was cancelled after its headers: still recorded at the
	 * exit.
	 */
	@Test
	void anErrorAnswerCancelledMidWriteIsRecordedWithTheOutcomeItWasGiven() {
		this.recorder.streamRequested();
		this.recorder.responded(502);
		this.recorder.outcome(StreamOutcome.ofProxyAnswer(502));
		this.recorder.close(10 * MS, true);
		PrometheusText metrics = scrape();
		assertThat(metrics.value("tokengap_streams_total", "outcome", "upstream_error")).isEqualTo(1);
		assertThat(metrics.value("tokengap_requests_total", "status", "502")).isEqualTo(1);
	}

	@Test
	void aClientGoneBeforeTheHeadersIsCancelledWithStatus499() {
		this.recorder.streamRequested();
		this.recorder.close(10 * MS, true);
		PrometheusText metrics = scrape();
		assertThat(metrics.value("tokengap_streams_total", "outcome", "client_cancelled")).isEqualTo(1);
		assertThat(metrics.value("tokengap_requests_total", "status", "499")).isEqualTo(1);
	}

	@Test
	void theFirstOutcomeSaidWins() {
		this.recorder.streamStarted();
		this.recorder.responded(503);
		this.recorder.outcome(StreamOutcome.ofEngineStatus(503));
		this.recorder.outcome(StreamOutcome.CLIENT_CANCELLED);
		this.recorder.close(10 * MS, true);
		assertThat(scrape().value("tokengap_streams_total", "outcome", "rejected")).isEqualTo(1);
		assertThat(scrape().value("tokengap_streams_total")).isEqualTo(1);
	}

	/**
	 * Requests count in the series of their own status, the series of each status looked
	 * up once and kept: many requests of a few statuses, and statuses outside the three
	 * digits, all land where they belong.
	 */
	@Test
	void requestsAreCountedByTheirOwnStatus() {
		int[] statuses = { 200, 200, 404, 200, 503, 499, 200, 404, 1000, -1 };
		for (int status : statuses) {
			ExchangeRecorder r = newRecorder();
			if (status != -1) {
				r.responded(status);
			}
			r.close(MS, status == -1);
		}
		PrometheusText metrics = scrape();
		assertThat(metrics.value("tokengap_requests_total", "status", "200")).isEqualTo(4);
		assertThat(metrics.value("tokengap_requests_total", "status", "404")).isEqualTo(2);
		assertThat(metrics.value("tokengap_requests_total", "status", "503")).isEqualTo(1);
		assertThat(metrics.value("tokengap_requests_total", "status", "1000")).isEqualTo(1);
		// the one given 499 and the client that left before any status
		assertThat(metrics.value("tokengap_requests_total", "status", "499")).isEqualTo(2);
		assertThat(metrics.value("tokengap_requests_total")).isEqualTo(statuses.length);
	}

	@Test
	void aNonStreamedRequestIsCountedButHasNoOutcome() {
		this.recorder.responded(200);
		this.recorder.completed(50 * MS);
		this.recorder.close(51 * MS, false);
		PrometheusText metrics = scrape();
		assertThat(metrics.value("tokengap_requests_total", "status", "200")).isEqualTo(1);
		assertThat(metrics.value("tokengap_streams_total")).isZero();
		assertThat(metrics.value("tokengap_e2e_request_latency_seconds_count")).isEqualTo(1);
	}

	@Test
	void aCompletedStreamWithAStallIsNotSmooth() {
		this.recorder.streamStarted();
		written(0, 100 * MS);
		written(0, 600 * MS);
		this.recorder.outcome(StreamOutcome.COMPLETED);
		this.recorder.close(700 * MS, false);
		PrometheusText metrics = scrape();
		assertThat(metrics.value("tokengap_stalls_total")).isEqualTo(1);
		assertThat(metrics.value("tokengap_smooth_streams_total")).isZero();
	}

	@Test
	void timesTheFirstTokenOnceWhateverChoiceItBelongsTo() {
		this.recorder.streamStarted();
		written(1, 100 * MS);
		written(0, 101 * MS);
		written(1, 130 * MS);
		PrometheusText metrics = scrape();
		assertThat(metrics.value("tokengap_time_to_first_token_seconds_count")).isEqualTo(1);
		assertThat(metrics.value("tokengap_time_to_first_token_seconds_sum")).isEqualTo(0.1);
		assertThat(metrics.value("tokengap_inter_token_latency_seconds_count")).isEqualTo(1);
	}

	@Test
	void tellsTheObserverOfGapsWithinAChoiceOnly() {
		int[] gaps = new int[1];
		long[] previous = new long[1];
		this.meters.gapObserver(new GapObserver() {

			@Override
			public void firstContent(ContentWrite event, long promptTokens) {
			}

			@Override
			public void gap(StreamTimer timer, int choice, String requestId, String model, String endpoint,
					ContentWrite event) {
				gaps[0]++;
				previous[0] = timer.lastContentNanos(choice);
			}

		});
		this.recorder.streamStarted();
		written(0, 100 * MS);
		written(1, 101 * MS);
		written(0, 130 * MS);
		assertThat(gaps[0]).isEqualTo(1);
		assertThat(previous[0]).isEqualTo(100 * MS);
	}

	/**
	 * A recording that throws is counted, and the exchange still ends with its outcome.
	 */
	@Test
	void countsRecordingFailuresAndKeepsRecording() {
		this.meters.gapObserver(new GapObserver() {

			@Override
			public void firstContent(ContentWrite event, long promptTokens) {
				throw new IllegalStateException("a bug");
			}

			@Override
			public void gap(StreamTimer timer, int choice, String requestId, String model, String endpoint,
					ContentWrite event) {
				throw new IllegalStateException("a bug");
			}

		});
		this.recorder.streamStarted();
		written(0, 100 * MS);
		written(0, 120 * MS);
		this.recorder.outcome(StreamOutcome.COMPLETED);
		this.recorder.close(200 * MS, false);
		PrometheusText metrics = scrape();
		assertThat(metrics.value("tokengap_recording_errors_total")).isEqualTo(2);
		assertThat(metrics.value("tokengap_streams_total", "outcome", "completed")).isEqualTo(1);
	}

	@Test
	void hasMetersForEveryEndpointAndOutcome() {
		for (Endpoint endpoint : Endpoint.values()) {
			ExchangeRecorder r = new ExchangeRecorder(this.meters, 0);
			r.route("m", endpoint);
			r.streamRequested();
			r.close(1, true);
		}
		PrometheusText metrics = scrape();
		for (Endpoint endpoint : Endpoint.values()) {
			for (StreamOutcome outcome : StreamOutcome.values()) {
				assertThat(metrics.matching("tokengap_streams_total", "endpoint", endpoint.label(), "outcome",
						outcome.label()))
					.hasSize(1);
			}
		}
		assertThat(metrics.value("tokengap_recording_errors_total")).isZero();
	}

	/**
	 * An event of {@code choice} written at {@code writeNanos}, read from upstream at 0.
	 */
	private void written(int choice, long writeNanos) {
		this.event.setWriteNanos(writeNanos);
		this.recorder.contentWritten(choice, this.event);
	}

	private PrometheusText scrape() {
		return PrometheusText.scrape(this.registry);
	}

}
