package dev.tokengap.backend;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * The engines seen behind one metrics URL within the history window, and the counters
 * rebased so that they describe what happened, whichever engine answered.
 *
 * <pre>
 * scrape ─► same identity? ──yes──► counters rise by their own delta (a drop: a restart, from 0)
 *              │no
 *              ├─ same engines and model, started later, counters dropped ─► restart: from 0
 *              └─ otherwise ─► another engine (a pool): counters rise by 0 on first sight
 * </pre>
 *
 * A Service with several engine pods behind one URL gives a pool: the scrape's kept-alive
 * connection lands on one pod and, on reconnect, maybe another. The rebased counters
 * never go backwards and never jump by another engine's total. Used by one scrape at a
 * time.
 */
final class EngineRoster {

	private static final Log logger = LogFactory.getLog(EngineRoster.class);

	private static final int COUNTERS = 9;

	private final String url;

	private final long windowNanos;

	private final List<Seen> seen = new ArrayList<>();

	private final double[] rebased = new double[COUNTERS];

	private boolean poolLogged;

	EngineRoster(String url, long windowNanos) {
		this.url = url;
		this.windowNanos = windowNanos;
		Arrays.fill(this.rebased, Double.NaN);
	}

	/**
	 * Admits one scrape's sample.
	 * @param sample the engine's values as scraped
	 * @param identity the engine that answered
	 * @return the sample with its counters rebased
	 */
	EngineSample admit(EngineSample sample, EngineIdentity identity) {
		long now = sample.nanos();
		this.seen.removeIf((s) -> now - s.lastNanos > this.windowNanos);
		double[] raw = counters(sample);
		Seen engine = find(identity);
		if (engine != null) {
			rise(raw, engine.counters, false, identity.startKnown());
		}
		else {
			engine = restarted(identity, raw);
			if (engine != null) {
				logger.info("The engine behind " + this.url + " restarted; its counters start again from 0");
				engine.identity = identity;
				rise(raw, null, true, true);
			}
			else {
				engine = new Seen(identity);
				this.seen.add(engine);
				firstSight(raw);
			}
		}
		engine.lastNanos = now;
		engine.counters = raw;
		return new EngineSample(now, sample.running(), sample.waiting(), sample.swapped(), sample.kvUsage(),
				this.rebased[0], this.rebased[1], this.rebased[2], sample.waitingForCapacity(), this.rebased[3],
				this.rebased[4], this.rebased[5], this.rebased[6], this.rebased[7], this.rebased[8]);
	}

	/**
	 * The distinct engines seen within the window, as of the last admitted sample.
	 * @return the count; more than 1 is a pool
	 */
	int engines() {
		return this.seen.size();
	}

	private Seen find(EngineIdentity identity) {
		for (Seen s : this.seen) {
			if (s.identity.equals(identity)) {
				return s;
			}
		}
		return null;
	}

	private Seen restarted(EngineIdentity identity, double[] raw) {
		for (Seen s : this.seen) {
			if (identity.mayRestart(s.identity) && dropped(raw, s.counters)) {
				return s;
			}
		}
		return null;
	}

	// The first engine's totals are the mirror's start (as before any restart was seen);
	// a further engine adds nothing until its counters rise.
	private void firstSight(double[] raw) {
		boolean first = this.seen.size() == 1;
		for (int i = 0; i < COUNTERS; i++) {
			if (Double.isNaN(this.rebased[i]) && (first || !Double.isNaN(raw[i]))) {
				this.rebased[i] = first ? raw[i] : 0;
			}
		}
		if (this.seen.size() > 1 && !this.poolLogged) {
			this.poolLogged = true;
			logger.warn("More than one engine answers behind " + this.url + " (a Service over several pods?): "
					+ "tokengap mirrors one arbitrary engine per connection, so spike attribution says 'unknown' and "
					+ "tokengap_backend_engines counts them. Run tokengap as a sidecar of each engine (the Helm "
					+ "chart's sidecar mode), or one tokengap per engine.");
		}
	}

	/**
	 * After a restart all of a counter's value is new. A counter of the same engine that
	 * went down restarted from 0 when the start time is unknown; with a known, unchanged
	 * start time it is no restart (e.g. one API-server process missing from the sum): it
	 * adds nothing.
	 */
	private void rise(double[] raw, double[] previous, boolean restart, boolean startKnown) {
		for (int i = 0; i < COUNTERS; i++) {
			if (Double.isNaN(raw[i])) {
				continue;
			}
			double delta = (restart || previous == null || Double.isNaN(previous[i])) ? raw[i] : raw[i] - previous[i];
			if (delta < 0) {
				delta = startKnown ? 0 : raw[i];
			}
			this.rebased[i] = (Double.isNaN(this.rebased[i]) ? 0 : this.rebased[i]) + delta;
		}
	}

	private static boolean dropped(double[] raw, double[] previous) {
		for (int i = 0; i < COUNTERS; i++) {
			if (raw[i] < previous[i]) {
				return true;
			}
		}
		return false;
	}

	private static double[] counters(EngineSample sample) {
		return new double[] { sample.preemptions(), sample.promptTokens(), sample.generationTokens(),
				sample.promptTokensComputed(), sample.prefillSeconds(), sample.prefillRequests(),
				sample.prefillComputedTokens(), sample.finishedRequests(), sample.finishedRequestPreemptions() };
	}

	/** One engine seen: who, when last, and its counters then. */
	private static final class Seen {

		EngineIdentity identity;

		long lastNanos;

		double[] counters;

		Seen(EngineIdentity identity) {
			this.identity = identity;
		}

	}

}
