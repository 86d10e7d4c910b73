package dev.tokengap.sim;

import java.util.List;

/**
 * How one endpoint writes a stream as vLLM does: each method gives the whole SSE events
 * ({@code data: …\n\n}, or {@code event: …\ndata: …\n\n}) to write. One instance per
 * stream, called on its event loop only.
 */
interface StreamShape {

	/** Events sent at once, before the engine runs (before the prefill). */
	default List<String> start() {
		return List.of();
	}

	/** The events of one engine output. */
	List<String> of(ChoiceOutput output);

	/** The events after the last output of every choice. */
	List<String> end();

	/** The in-band error that ends a stream after its 200. */
	List<String> error(String message);

	/**
	 * What is left of an error raised before the first token, which vLLM drops (PR
	 * #40986).
	 * @param first the first output, whose content is never sent
	 */
	List<String> dropped(ChoiceOutput first);

}
