package dev.tokengap.attribution;

import java.util.function.ToDoubleFunction;

import dev.tokengap.backend.EngineSample;

/**
 * The engine's counters and gauges at a gap's two edges, each interpolated between the
 * two scrapes around it, so that what is credited to a gap is what happened over the gap
 * itself, not over whatever stretch the scrapes bracketing it happened to span.
 *
 * <p>
 * A counter that rises between two scrapes is taken to rise evenly between them: the
 * increase credited to a gap is its share of each scrape interval it overlaps. Which of
 * two scrapes 400 ms apart saw a jump then no longer decides the verdict; what happens
 * exactly at an edge (the step that ends the gap) is credited in proportion, and
 * tokengap's own view of the streams (first tokens, resumed streams) covers that step.
 */
final class GapCounters {

	private final EngineSample[] window;

	private final int from;

	private final int to;

	private final long startNanos;

	private final long endNanos;

	/**
	 * @param window samples, oldest first
	 * @param from the last sample at or before the gap's start
	 * @param to the first sample at or after its end
	 * @param startNanos the gap's start
	 * @param endNanos the gap's end
	 */
	GapCounters(EngineSample[] window, int from, int to, long startNanos, long endNanos) {
		this.window = window;
		this.from = from;
		this.to = to;
		this.startNanos = startNanos;
		this.endNanos = endNanos;
	}

	/**
	 * A counter's increase over the gap (0 after a reset), or null when a sample lacks
	 * it.
	 */
	Double increase(ToDoubleFunction<EngineSample> counter) {
		double start = at(this.startNanos, counter);
		double end = at(this.endNanos, counter);
		return (Double.isNaN(start) || Double.isNaN(end)) ? null : Math.max(0, end - start);
	}

	Double atStart(ToDoubleFunction<EngineSample> gauge) {
		double value = at(this.startNanos, gauge);
		return Double.isNaN(value) ? null : value;
	}

	Double atEnd(ToDoubleFunction<EngineSample> gauge) {
		double value = at(this.endNanos, gauge);
		return Double.isNaN(value) ? null : value;
	}

	private double at(long nanos, ToDoubleFunction<EngineSample> series) {
		for (int i = this.from; i < this.to; i++) {
			EngineSample a = this.window[i];
			EngineSample b = this.window[i + 1];
			if (nanos >= a.nanos() && nanos <= b.nanos()) {
				double va = series.applyAsDouble(a);
				double vb = series.applyAsDouble(b);
				long span = b.nanos() - a.nanos();
				return (span <= 0) ? vb : va + (vb - va) * (nanos - a.nanos()) / span;
			}
		}
		return series.applyAsDouble(this.window[(nanos <= this.window[this.from].nanos()) ? this.from : this.to]);
	}

}
