package dev.tokengap.attribution;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Set;

import dev.tokengap.timing.EngineReport;
import dev.tokengap.timing.StreamTimer;

/**
 * Corrects a stream's spikes with what the engine reported for the request at its end
 * (vLLM's per-request metrics, {@code --enable-per-request-metrics}). Never required:
 * without a report the spikes keep the cause the rules gave them.
 *
 * <ul>
 * <li><b>Time lost after the engine.</b> The engine times its decode from its first
 * output token to its last ({@code generation_time_ms}), on its own clock; tokengap saw
 * the same tokens arrive over a longer span when some were held up after the engine (its
 * API server, detokenizer, the network). That difference is spent on the stream's largest
 * spikes first: a spike whose excess over the stream's usual gap it covers (at least
 * three quarters of it) happened after the engine, so it is {@code engine_other} in scope
 * {@code after_engine}, whatever the engine's gauges did meanwhile (a preemption
 * elsewhere, a queue), and also when they could not be read ({@code unknown}).</li>
 * <li><b>Preemptions of this request</b>, where the engine counts them
 * ({@code num_preemptions} in a build's per-request metrics, else its per-request
 * preemption histogram across the request's end, see {@link FinishedPreemptions}): none
 * means a spike blamed on this stream's own preemption was not one (it is
 * {@code engine_other}); some mean a singled-out spike was, when the engine's preemption
 * counter could not be read across it (a counter that did not rise says no preemption
 * happened in the gap, whatever the request went through at other times).</li>
 * </ul>
 * The causes given before stay in the record, after the new one.
 */
final class EngineReportRules {

	/** Slack for the two clocks and the first event's bytes: 20 ms or 2% of the span. */
	private static final long SLACK_NANOS = 20_000_000L;

	/**
	 * Causes the engine's own decode time can overrule: its own, and "no engine data".
	 */
	private static final Set<String> ENGINE_SIDE = Set.of(SpikeCause.PREEMPTION.label(),
			SpikeCause.PREFILL_INTERFERENCE.label(), SpikeCause.BATCH_GROWTH.label(), SpikeCause.QUEUE_PRESSURE.label(),
			SpikeCause.ENGINE_OTHER.label(), SpikeCause.UNKNOWN.label());

	private EngineReportRules() {
	}

	/**
	 * @param judged the stream's judged spikes
	 * @param timer the stream's timer
	 * @param report what the engine reported
	 * @param properties thresholds
	 * @return the records in the same order, each corrected or with the report attached
	 */
	static List<SpikeRecord> correct(List<SpikeAttributor.Judged> judged, StreamTimer timer, EngineReport report,
			AttributionProperties properties) {
		return correct(judged, timer, report, properties, "the engine says");
	}

	/**
	 * @param judged the stream's judged spikes
	 * @param timer the stream's timer
	 * @param report what the engine reported
	 * @param properties thresholds
	 * @param says who told the request's preemptions, as the summary words it
	 * @return the records in the same order, each corrected or with the report attached
	 */
	static List<SpikeRecord> correct(List<SpikeAttributor.Judged> judged, StreamTimer timer, EngineReport report,
			AttributionProperties properties, String says) {
		SpikeRecord[] records = new SpikeRecord[judged.size()];
		for (int i = 0; i < records.length; i++) {
			records[i] = judged.get(i).record().withEngine(report);
		}
		boolean[] afterEngine = new boolean[records.length];
		if (report.hasGenerationTime() && timer.firstArrivalNanos() >= 0) {
			long observed = timer.lastArrivalNanos() - timer.firstArrivalNanos();
			long outside = observed - (long) (report.generationMs() * 1e6) - Math.max(SLACK_NANOS, observed / 50);
			Integer[] order = new Integer[records.length];
			Arrays.setAll(order, (i) -> i);
			Arrays.sort(order, Comparator.comparingLong((Integer i) -> -judged.get(i).spike().engineGapNanos()));
			for (int i : order) {
				Spike spike = judged.get(i).spike();
				if (!ENGINE_SIDE.contains(records[i].cause()) || SpikeScope.HOST.label().equals(records[i].scope())) {
					continue;
				}
				long usual = (long) (spike.thresholdNanos() / properties.spikeFactor());
				long excess = Math.max(0, spike.engineGapNanos() - usual);
				if (outside >= excess * 3 / 4) {
					outside -= excess;
					afterEngine[i] = true;
					records[i] = records[i].corrected(SpikeCause.ENGINE_OTHER, SpikeScope.AFTER_ENGINE,
							"the engine's own decode time (" + Math.round(report.generationMs())
									+ " ms) is shorter than the span tokengap received the stream over by more than"
									+ " this gap: the time was lost after the engine",
							report);
				}
			}
		}
		if (report.hasPreemptions()) {
			for (int i = 0; i < records.length; i++) {
				if (afterEngine[i]) {
					continue;
				}
				boolean own = SpikeScope.SINGLED_OUT.label().equals(records[i].scope())
						|| SpikeScope.ALONE.label().equals(records[i].scope());
				if (report.preemptions() == 0 && own && SpikeCause.PREEMPTION.label().equals(records[i].cause())) {
					records[i] = records[i].corrected(nextCause(records[i]), SpikeScope.valueOf(scopeName(records[i])),
							says + " it never preempted this request", report);
				}
				// A preemption of this request explains a stall only the gauges could not
				// see: with the engine's preemption counter read across the gap, no rise
				// means no preemption in it, however often the request was preempted.
				else if (report.preemptions() > 0 && SpikeScope.SINGLED_OUT.label().equals(records[i].scope())
						&& SpikeCause.ENGINE_OTHER.label().equals(records[i].cause())
						&& records[i].evidence().preemptions() == null) {
					records[i] = records[i].corrected(SpikeCause.PREEMPTION, SpikeScope.SINGLED_OUT,
							says + " it preempted this request " + report.preemptions() + " times", report);
				}
			}
		}
		return new ArrayList<>(Arrays.asList(records));
	}

	/** The cause a record would have without its own preemption. */
	private static SpikeCause nextCause(SpikeRecord record) {
		if (SpikeScope.ALONE.label().equals(record.scope())) {
			for (String label : record.causes()) {
				if (!label.equals(SpikeCause.PREEMPTION.label())) {
					return SpikeCause.valueOf(label.toUpperCase());
				}
			}
		}
		return SpikeCause.ENGINE_OTHER;
	}

	private static String scopeName(SpikeRecord record) {
		return record.scope().toUpperCase();
	}

}
