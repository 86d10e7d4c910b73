package dev.tokengap.attribution;

import java.util.function.BiConsumer;
import java.util.function.Consumer;

import dev.tokengap.timing.ContentWrite;
import dev.tokengap.timing.GapObserver;
import dev.tokengap.timing.StreamTimer;

/**
 * Decides, per gap, whether it is a spike: at least the floor, and at least
 * {@code factor} times the stream's median gap so far once the stream has 5 gaps. A gap
 * is between two content events of the same choice. Only spikes allocate anything: the
 * spike and its stream, handed over as they are; what every other live stream received
 * during the gap is looked at off the event loop, by the attributor's scan thread, as
 * soon as it takes the spike (their recent arrivals keep the gap for a while after it).
 */
final class SpikeDetector implements GapObserver {

	static final int MIN_GAPS_FOR_MEDIAN = 5;

	private final long floorNanos;

	private final double factor;

	private final FirstTokenLog firstTokens;

	private final PeerStreams peers;

	private final BiConsumer<Spike, StreamTimer> spikes;

	private final Consumer<StreamTimer> ended;

	SpikeDetector(AttributionProperties properties, FirstTokenLog firstTokens, PeerStreams peers,
			BiConsumer<Spike, StreamTimer> spikes, Consumer<StreamTimer> ended) {
		this.ended = ended;
		this.floorNanos = properties.spikeFloor().toNanos();
		this.factor = properties.spikeFactor();
		this.firstTokens = firstTokens;
		this.peers = peers;
		this.spikes = spikes;
	}

	@Override
	public void streamStarted(StreamTimer timer, String requestId, long promptTokens) {
		this.peers.started(timer, requestId, promptTokens);
	}

	@Override
	public void streamEnded(StreamTimer timer) {
		this.peers.ended(timer);
		this.ended.accept(timer);
	}

	@Override
	public void firstContent(ContentWrite event, long promptTokens) {
		this.firstTokens.record(event.arrivalNanos(), promptTokens);
	}

	@Override
	public void gap(StreamTimer timer, int choice, String requestId, String model, String endpoint,
			ContentWrite event) {
		long previousWrite = timer.lastContentNanos(choice);
		long gap = event.writeNanos() - previousWrite;
		if (gap < this.floorNanos) {
			return;
		}
		long threshold = this.floorNanos;
		if (timer.gapCount() >= MIN_GAPS_FOR_MEDIAN) {
			if (gap < (long) (this.factor * timer.medianGapLowerBoundNanos())) {
				// under the factor of a bound the median is never below: no spike, known
				// without walking the stream's gaps (a stream slower than the floor has
				// every gap over it)
				return;
			}
			threshold = Math.max(threshold, (long) (this.factor * timer.medianGapNanos()));
		}
		if (gap >= threshold) {
			GapWindow window = GapWindow.of(timer, choice, event);
			this.spikes.accept(new Spike(requestId, model, endpoint, choice, timer.contentEvents(choice), threshold,
					window, System.currentTimeMillis(), timer.traceId()), timer);
		}
	}

}
