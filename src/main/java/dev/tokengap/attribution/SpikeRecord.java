package dev.tokengap.attribution;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import dev.tokengap.timing.EngineReport;

/**
 * One attributed spike, as logged and served newest-first at {@code /actuator/spikes}.
 * Carries no prompt or completion text.
 *
 * @param time when the event that ended the gap was written to the client
 * @param requestId the request id
 * @param model the bounded model label
 * @param endpoint the endpoint label
 * @param choice the choice index the gap belongs to
 * @param tokenIndex index of the content event that ended the gap among its choice's
 * @param gapMs the client-visible gap
 * @param thresholdMs the spike threshold that applied
 * @param upstreamGapMs the same gap as it arrived from the engine
 * @param writeDelayMs client write time minus upstream arrival of the event
 * @param socketWaitMs time writes inside the gap spent waiting for the client's socket
 * @param cause the attributed cause
 * @param causes every cause whose evidence matched, the attributed one first
 * @param scope whose stall it was ({@link SpikeScope}): what the choice rested on
 * @param summary the same in words, e.g. "engine_other: engine-wide stall, none of 6
 * other streams received content; also matched: preemptions elsewhere in the window (+2)"
 * @param evidence everything gathered, whatever the cause
 * @param engine the engine's own figures for the request when it reported them (vLLM's
 * per-request metrics), else null
 * @param paceMs the stream's own step before the gap (0 where the engine's evidence was
 * not weighed)
 * @param excessMs the engine's part of the gap beyond that pace
 * @param explained each candidate with the milliseconds of the excess it can explain, and
 * what is left unexplained ({@code engine_other}); empty where the engine's evidence was
 * not weighed (client, host, after the engine, no engine data)
 * @param traceId the W3C trace id of the stream's request, or null
 * @param position where the spike sits in its stream ({@link SpikePosition}: the first,
 * middle or last third of its choice's content events); null until the stream has ended,
 * since only then is its length known
 * @param streamEvents the stream's length in content events (its choice's), or 0 until it
 * has ended
 */
public record SpikeRecord(Instant time, String requestId, String model, String endpoint, int choice, int tokenIndex,
		double gapMs, double thresholdMs, double upstreamGapMs, double writeDelayMs, double socketWaitMs, String cause,
		List<String> causes, String scope, String summary, Evidence evidence, EngineReport engine, double paceMs,
		double excessMs, List<Explained> explained, String traceId, String position, int streamEvents) {

	/**
	 * What one candidate explains of a gap.
	 *
	 * @param cause the candidate
	 * @param ms the milliseconds of the gap's excess it can account for
	 * @param what the estimate in words
	 */
	public record Explained(String cause, double ms, String what) {

	}

	static SpikeRecord of(Spike spike, CauseRules.Verdict verdict, Evidence evidence) {
		Magnitudes magnitudes = verdict.magnitudes();
		boolean weighed = magnitudes != Magnitudes.NONE;
		return new SpikeRecord(Instant.ofEpochMilli(spike.epochMillis()), spike.requestId(), spike.model(),
				spike.endpoint(), spike.choice(), spike.tokenIndex(), millis(spike.gapNanos()),
				millis(spike.thresholdNanos()), millis(spike.upstreamGapNanos()), millis(spike.writeDelayNanos()),
				millis(spike.socketWaitNanos()), verdict.cause().label(), labels(verdict.matched()),
				verdict.scope().label(), summary(verdict, evidence), evidence, null, millis(magnitudes.paceNanos()),
				millis(magnitudes.excessNanos()), weighed ? magnitudes.explained() : List.of(), spike.traceId(), null,
				0);
	}

	/**
	 * This record as corrected by the engine's own figures for the request.
	 * @param cause the cause they establish
	 * @param scope the scope they establish
	 * @param why what they said, in words
	 * @param report the figures
	 * @return the corrected record, the earlier causes kept after the new one
	 */
	SpikeRecord corrected(SpikeCause cause, SpikeScope scope, String why, EngineReport report) {
		List<String> all = new ArrayList<>(this.causes);
		all.remove(cause.label());
		all.add(0, cause.label());
		return new SpikeRecord(this.time, this.requestId, this.model, this.endpoint, this.choice, this.tokenIndex,
				this.gapMs, this.thresholdMs, this.upstreamGapMs, this.writeDelayMs, this.socketWaitMs, cause.label(),
				List.copyOf(all), scope.label(), cause.label() + ": " + why + " (was " + this.summary + ")",
				this.evidence, report, this.paceMs, this.excessMs, this.explained, this.traceId, this.position,
				this.streamEvents);
	}

	/** This record with the engine's figures attached, its cause unchanged. */
	SpikeRecord withEngine(EngineReport report) {
		return new SpikeRecord(this.time, this.requestId, this.model, this.endpoint, this.choice, this.tokenIndex,
				this.gapMs, this.thresholdMs, this.upstreamGapMs, this.writeDelayMs, this.socketWaitMs, this.cause,
				this.causes, this.scope, this.summary, this.evidence, report, this.paceMs, this.excessMs,
				this.explained, this.traceId, this.position, this.streamEvents);
	}

	/**
	 * This record placed in its stream, once the stream's length is known.
	 * @param events the stream's content events (the spike's choice's)
	 * @return the record with its position and the stream's length
	 */
	SpikeRecord placed(int events) {
		return new SpikeRecord(this.time, this.requestId, this.model, this.endpoint, this.choice, this.tokenIndex,
				this.gapMs, this.thresholdMs, this.upstreamGapMs, this.writeDelayMs, this.socketWaitMs, this.cause,
				this.causes, this.scope, this.summary, this.evidence, this.engine, this.paceMs, this.excessMs,
				this.explained, this.traceId, SpikePosition.of(this.tokenIndex, events).label(), events);
	}

	private static List<String> labels(List<SpikeCause> causes) {
		List<String> labels = new ArrayList<>(causes.size());
		causes.forEach((cause) -> labels.add(cause.label()));
		return List.copyOf(labels);
	}

	static String summary(CauseRules.Verdict verdict, Evidence evidence) {
		StringBuilder text = new StringBuilder(verdict.cause().label()).append(": ")
			.append(scopeText(verdict.scope(), evidence));
		String chosen = causeText(verdict.cause(), verdict, evidence, true);
		if (!chosen.isEmpty()) {
			text.append(", ").append(chosen);
		}
		List<String> also = new ArrayList<>();
		for (SpikeCause cause : verdict.matched().subList(1, verdict.matched().size())) {
			also.add(causeText(cause, verdict, evidence, false));
		}
		if (!also.isEmpty()) {
			text.append("; also matched: ").append(String.join("; ", also));
		}
		if (verdict.magnitudes() != Magnitudes.NONE) {
			text.append(" (").append(verdict.magnitudes().text()).append(')');
		}
		return text.toString();
	}

	private static String scopeText(SpikeScope scope, Evidence evidence) {
		int others = evidence.peersDecoding();
		return switch (scope) {
			case CLIENT -> "the engine was on time; writes waited for the client's socket";
			case HOST -> "the engine was on time; the write started late (this host)";
			case NO_ENGINE_DATA -> "no engine data for the gap";
			case SINGLED_OUT ->
				"singled out, " + evidence.peersFed() + " of " + others + " other streams kept receiving content";
			case ENGINE_WIDE -> "engine-wide stall, none of " + others + " other streams received content";
			case ALONE -> "no other stream decoding to compare with";
			case AFTER_ENGINE -> "held up after the engine: the " + evidence.heldBack()
					+ " events that followed came at once, so the engine had produced them meanwhile"
					+ " (its API server, the network)";
		};
	}

	private static String causeText(SpikeCause cause, CauseRules.Verdict verdict, Evidence evidence, boolean chosen) {
		return switch (cause) {
			case PREEMPTION -> preemptionText(verdict, evidence, chosen);
			case PREFILL_INTERFERENCE -> "prefill of new prompts (" + verdict.magnitudes().prefillTokens() + " tokens)";
			case BATCH_GROWTH -> "batch grew (running " + number(evidence.runningBefore()) + " to "
					+ number(evidence.runningAtEnd()) + ", " + evidence.otherFirstTokens() + " streams joined)";
			case QUEUE_PRESSURE ->
				"requests waiting for capacity with the KV cache at " + Math.round(100 * evidence.kvUsageMax()) + "%";
			case ENGINE_OTHER -> chosen ? "nothing in the engine's scheduling explains it" : "";
			default -> "";
		};
	}

	private static String preemptionText(CauseRules.Verdict verdict, Evidence evidence, boolean chosen) {
		boolean recompute = evidence.peersResumed() > 0 && verdict.scope() != SpikeScope.SINGLED_OUT;
		if (chosen && recompute) {
			return "recompute of " + evidence.peersResumed() + " preempted streams (" + evidence.recomputeTokens()
					+ " tokens)";
		}
		if (chosen) {
			return "preempted (preemption counter +" + number(evidence.preemptions()) + ")";
		}
		return "preemptions elsewhere in the window (+" + number(evidence.preemptions()) + ")"
				+ ((evidence.peersResumed() > 0) ? ", " + evidence.peersResumed() + " recomputed" : "");
	}

	private static String number(Double value) {
		return (value == null) ? "?" : Long.toString(Math.round(value));
	}

	private static double millis(long nanos) {
		return Math.round(nanos / 1e4) / 100.0;
	}

}
