package dev.tokengap.metrics;

import java.util.Arrays;

import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.core.instrument.distribution.CountAtBucket;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import org.junit.jupiter.api.Test;

import dev.tokengap.testsupport.PrometheusText;
import dev.tokengap.timing.ContentWrite;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The GenAI names on a real Micrometer registry, recorded through
 * {@link ExchangeRecorder} with made-up times: the same observations as the Prometheus
 * series, with the convention's attributes and the Prometheus series' bucket edges; and
 * nothing at all without the catalogue.
 */
class GenAiMetersTests {

	private static final long MS = 1_000_000;

	private final PrometheusRegistry prometheus = new PrometheusRegistry();

	private final SimpleMeterRegistry otlp = new SimpleMeterRegistry();

	private final TokengapMeters meters = new TokengapMeters(this.prometheus, BucketEdges.VLLM_V1, 400 * MS, () -> 0);

	private final ContentWrite event = new ContentWrite();

	@Test
	void aStreamIsRecordedUnderTheGenAiNamesWithTheConventionsAttributesAndTheSameEdges() {
		this.meters.genAi(new GenAiMeters(this.otlp, BucketEdges.VLLM_V1));
		stream("m", Endpoint.CHAT_COMPLETIONS, StreamOutcome.COMPLETED, 12);
		DistributionSummary ttft = summary(GenAiMeters.TIME_TO_FIRST_CHUNK, null);
		assertThat(ttft.count()).isEqualTo(1);
		assertThat(ttft.totalAmount()).isEqualTo(0.1);
		assertThat(ttft.getId().getBaseUnit()).isEqualTo("s");
		assertThat(edges(ttft)).containsExactly(BucketEdges.V1_TTFT);
		DistributionSummary chunks = summary(GenAiMeters.TIME_PER_OUTPUT_CHUNK, null);
		assertThat(chunks.count()).isEqualTo(11);
		assertThat(edges(chunks)).containsExactly(BucketEdges.V1_ITL);
		DistributionSummary tpot = summary(GenAiMeters.TIME_PER_OUTPUT_TOKEN, null);
		assertThat(tpot.count()).isEqualTo(1);
		assertThat(edges(tpot)).containsExactly(BucketEdges.V1_ITL);
		DistributionSummary duration = summary(GenAiMeters.REQUEST_DURATION, null);
		assertThat(duration.count()).isEqualTo(1);
		assertThat(duration.totalAmount()).isEqualTo(0.4);
		assertThat(edges(duration)).containsExactly(BucketEdges.V1_REQUEST);
		assertThat(ttft.getId().getTag(GenAiMeters.OPERATION_NAME)).isEqualTo("chat");
		assertThat(ttft.getId().getTag(GenAiMeters.PROVIDER_NAME)).isEqualTo("vllm");
		assertThat(ttft.getId().getTag(GenAiMeters.REQUEST_MODEL)).isEqualTo("m");
		assertThat(ttft.getId().getTag(GenAiMeters.ERROR_TYPE)).isNull();
		PrometheusText scrape = PrometheusText.scrape(this.prometheus);
		assertThat(scrape.text()).doesNotContain("gen_ai");
		assertThat(scrape.value("tokengap_inter_token_latency_seconds_count")).isEqualTo(11);
	}

	@Test
	void aFailedStreamsDurationCarriesItsOutcomeAsErrorType() {
		this.meters.genAi(new GenAiMeters(this.otlp, BucketEdges.VLLM_V1));
		stream("m", Endpoint.RESPONSES, StreamOutcome.ENGINE_ERROR, 3);
		DistributionSummary failed = summary(GenAiMeters.REQUEST_DURATION, "engine_error");
		assertThat(failed.count()).isEqualTo(1);
		assertThat(failed.getId().getTag(GenAiMeters.OPERATION_NAME)).isEqualTo("responses");
		assertThat(this.otlp.find(GenAiMeters.TIME_PER_OUTPUT_TOKEN).summary().count()).isZero();
	}

	@Test
	void aRequestThatWasNotStreamedFailsWithItsStatusAsErrorType() {
		this.meters.genAi(new GenAiMeters(this.otlp, BucketEdges.VLLM_V1));
		ExchangeRecorder recorder = new ExchangeRecorder(this.meters, 0);
		recorder.route("m", Endpoint.COMPLETIONS);
		recorder.responded(429);
		recorder.completed(5 * MS);
		recorder.close(6 * MS, false);
		DistributionSummary failed = summary(GenAiMeters.REQUEST_DURATION, "429");
		assertThat(failed.count()).isEqualTo(1);
		assertThat(failed.getId().getTag(GenAiMeters.OPERATION_NAME)).isEqualTo("text_completion");
	}

	@Test
	void endpointsWithoutAnOperationNameAreNotRecorded() {
		this.meters.genAi(new GenAiMeters(this.otlp, BucketEdges.VLLM_V1));
		stream("m", Endpoint.TRANSLATIONS, StreamOutcome.COMPLETED, 3);
		stream("m", Endpoint.OTHER, StreamOutcome.COMPLETED, 3);
		assertThat(this.otlp.getMeters()).isEmpty();
		assertThat(GenAiMeters.operation(Endpoint.MESSAGES)).isEqualTo("messages");
		assertThat(GenAiMeters.operation(Endpoint.TRANSCRIPTIONS)).isEqualTo("transcription");
	}

	@Test
	void withoutTheCatalogueNothingIsRecorded() {
		stream("m", Endpoint.CHAT_COMPLETIONS, StreamOutcome.COMPLETED, 12);
		assertThat(this.meters.meters("m", Endpoint.CHAT_COMPLETIONS).genAi).isNull();
		assertThat(this.otlp.getMeters()).isEmpty();
	}

	private void stream(String model, Endpoint endpoint, StreamOutcome outcome, int events) {
		ExchangeRecorder recorder = new ExchangeRecorder(this.meters, 0);
		recorder.route(model, endpoint);
		recorder.streamStarted();
		recorder.responded(200);
		for (int i = 0; i < events; i++) {
			this.event.setArrivalNanos((100 + 20 * i) * MS);
			this.event.setWriteStartNanos((100 + 20 * i) * MS);
			this.event.setWriteNanos((100 + 20 * i) * MS);
			recorder.contentWritten(0, this.event);
		}
		recorder.outputTokens(0, events);
		recorder.completed(400 * MS);
		recorder.outcome(outcome);
		recorder.close(401 * MS, false);
	}

	private DistributionSummary summary(String name, String errorType) {
		return this.otlp.find(name)
			.summaries()
			.stream()
			.filter((s) -> java.util.Objects.equals(s.getId().getTag(GenAiMeters.ERROR_TYPE), errorType))
			.findFirst()
			.orElseThrow(() -> new AssertionError(
					"no " + name + " with error.type " + errorType + " in " + this.otlp.getMetersAsString()));
	}

	private static double[] edges(DistributionSummary summary) {
		return Arrays.stream(summary.takeSnapshot().histogramCounts()).mapToDouble(CountAtBucket::bucket).toArray();
	}

}
