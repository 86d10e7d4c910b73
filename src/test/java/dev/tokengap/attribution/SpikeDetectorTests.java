package dev.tokengap.attribution;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import org.junit.jupiter.api.Test;

import dev.tokengap.metrics.BucketEdges;
import dev.tokengap.metrics.Endpoint;
import dev.tokengap.metrics.ExchangeRecorder;
import dev.tokengap.metrics.TokengapMeters;
import dev.tokengap.timing.ContentWrite;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The contract's spike rule, on a fake clock: a gap is a spike from the floor up, and
 * once its stream has 5 gaps, from the factor times its median gap so far up.
 */
class SpikeDetectorTests {

	private static final long FLOOR = TimeUnit.MILLISECONDS.toNanos(100);

	private static final AttributionProperties PROPERTIES = new AttributionProperties(Duration.ofNanos(FLOOR), 4, 200,
			1024, 1.5, 0.9, 10, 10_000, Duration.ofSeconds(10));

	private final TokengapMeters meters = new TokengapMeters(new PrometheusRegistry(), BucketEdges.VLLM_V1,
			Duration.ofMillis(400).toNanos(), () -> 0);

	/** Each spike's gap and threshold. */
	private final List<long[]> spikes = new ArrayList<>();

	private final ExchangeRecorder recorder;

	private final ContentWrite event = new ContentWrite();

	private long now = TimeUnit.SECONDS.toNanos(1);

	SpikeDetectorTests() {
		this.meters.gapObserver(new SpikeDetector(PROPERTIES, new FirstTokenLog(16), new PeerStreams(),
				(spike, timer) -> this.spikes.add(new long[] { spike.window().gapNanos(), spike.thresholdNanos() }),
				(timer) -> {
				}));
		this.recorder = new ExchangeRecorder(this.meters, this.now);
		this.recorder.route("m", Endpoint.CHAT_COMPLETIONS);
		this.recorder.identify("cmpl-1", 16);
		this.recorder.streamStarted();
		content(0);
	}

	@Test
	void judgesTheFirstFiveGapsByTheFloorAlone() {
		for (int i = 0; i < 8; i++) {
			content(millis(200));
		}
		assertThat(this.spikes).hasSize(SpikeDetector.MIN_GAPS_FOR_MEDIAN)
			.allSatisfy((spike) -> assertThat(spike).containsExactly(millis(200), FLOOR));
	}

	@Test
	void aGapIsASpikeFromTheFactorTimesTheMedianUp() {
		for (int i = 0; i < 9; i++) {
			content(millis(50));
		}
		long threshold = (long) (4 * this.recorder.timer().medianGapNanos());
		assertThat(threshold).isGreaterThan(FLOOR);
		content(threshold - 1);
		assertThat(this.spikes).isEmpty();
		threshold = (long) (4 * this.recorder.timer().medianGapNanos());
		content(threshold);
		assertThat(this.spikes).containsExactly(new long[] { threshold, threshold });
	}

	@Test
	void aStreamWithOneFastGapIsJudgedByItsMedianNotByItsFastestGap() {
		content(millis(10));
		for (int i = 0; i < 8; i++) {
			content(millis(90));
		}
		// four times the fastest gap is far below four times the median
		content(millis(300));
		assertThat(this.spikes).isEmpty();
		long threshold = (long) (4 * this.recorder.timer().medianGapNanos());
		content(threshold);
		assertThat(this.spikes).containsExactly(new long[] { threshold, threshold });
	}

	private void content(long gapNanos) {
		this.now += gapNanos;
		this.recorder.bodyWritten(this.now);
		this.event.setArrivalNanos(this.now - 50_000);
		this.event.setWriteStartNanos(this.now - 10_000);
		this.event.setWriteNanos(this.now);
		this.recorder.contentWritten(0, this.event);
	}

	private static long millis(long millis) {
		return TimeUnit.MILLISECONDS.toNanos(millis);
	}

}
