package dev.tokengap.attribution;

/**
 * Whose stall a spike was: what the choice of its cause rested on, kept in the spike
 * record.
 */
public enum SpikeScope {

	/**
	 * The event arrived from the engine on time and the writes waited for the client's
	 * socket.
	 */
	CLIENT("client"),
	/** The event arrived on time but its write started late: this host. */
	HOST("host"),
	/**
	 * No engine samples bracket the gap, or a pool of engines answers behind the metrics
	 * URL.
	 */
	NO_ENGINE_DATA("no_engine_data"),
	/** Other streams kept receiving content throughout the gap: only this one waited. */
	SINGLED_OUT("singled_out"),
	/**
	 * Other streams were decoding and none received content during the gap: the engine's
	 * step.
	 */
	ENGINE_WIDE("engine_wide"),
	/** No other stream was decoding through tokengap to compare with. */
	ALONE("alone"),
	/**
	 * The engine's own figures for the request say the time was lost after the engine.
	 */
	AFTER_ENGINE("after_engine");

	private final String label;

	SpikeScope(String label) {
		this.label = label;
	}

	public String label() {
		return this.label;
	}

}
