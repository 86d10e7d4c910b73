package dev.tokengap.attribution;

/**
 * Why a gap spiked: the {@code cause} label of {@code tokengap_gap_spike_seconds}.
 */
public enum SpikeCause {

	/** The engine preempted sequences during the gap (KV cache ran out). */
	PREEMPTION("preemption"),
	/** Another request's prefill finished during the gap and held up the decode step. */
	PREFILL_INTERFERENCE("prefill_interference"),
	/** The running batch grew markedly across the gap: every step got slower. */
	BATCH_GROWTH("batch_growth"),
	/** Requests were waiting while the KV cache was nearly full. */
	QUEUE_PRESSURE("queue_pressure"),
	/** The event arrived from the engine on time; writing it to the client was slow. */
	CLIENT_BACKPRESSURE("client_backpressure"),
	/** The engine's gauges were steady: network, detokenizer, GC, host. */
	ENGINE_OTHER("engine_other"),
	/** No engine data covers the gap. */
	UNKNOWN("unknown");

	private final String label;

	SpikeCause(String label) {
		this.label = label;
	}

	public String label() {
		return this.label;
	}

}
