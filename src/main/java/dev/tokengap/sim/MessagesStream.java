package dev.tokengap.sim;

import java.util.ArrayList;
import java.util.List;

/**
 * The Anthropic-style {@code /v1/messages} stream shape: {@code event: <type>} and
 * {@code data:} with the same {@code type}; a {@code thinking} block for the reasoning
 * tokens, then a {@code text} block, one delta per engine output; no {@code [DONE]}.
 *
 * <pre>
 * message_start
 * content_block_start, content_block_delta*, content_block_stop   (per block)
 * message_delta (stop_reason, usage.output_tokens), message_stop  | error
 * </pre>
 */
final class MessagesStream implements StreamShape {

	private final MessagesJson json;

	private int blockIndex = -1;

	private boolean blockOpen;

	private boolean thinkingBlock;

	private boolean started;

	private TokenOutput last;

	MessagesStream(MessagesJson json) {
		this.json = json;
	}

	@Override
	public List<String> of(ChoiceOutput output) {
		List<String> events = new ArrayList<>(4);
		addStart(events);
		boolean thinking = this.json.plan().reasoning(output.index());
		if (!this.blockOpen || thinking != this.thinkingBlock) {
			close(events);
			this.blockIndex++;
			this.blockOpen = true;
			this.thinkingBlock = thinking;
			events.add(event("content_block_start",
					"\"index\":" + this.blockIndex + ",\"content_block\":" + MessagesJson.block(thinking, "")));
		}
		events.add(event("content_block_delta",
				"\"index\":" + this.blockIndex + ",\"delta\":" + MessagesJson.delta(thinking, output.token().text())));
		this.last = output.token();
		return events;
	}

	/**
	 * vLLM sends {@code message_start} with the first output, as chat's prelude.
	 */
	private void addStart(List<String> events) {
		if (!this.started) {
			this.started = true;
			events.add(event("message_start", "\"message\":" + this.json.message(List.of(), null, 0)));
		}
	}

	private void close(List<String> events) {
		if (this.blockOpen) {
			this.blockOpen = false;
			events.add(event("content_block_stop", "\"index\":" + this.blockIndex));
		}
	}

	@Override
	public List<String> end() {
		List<String> events = new ArrayList<>(4);
		addStart(events);
		close(events);
		String stopReason = (this.last != null) ? MessagesJson.stopReason(this.last) : "end_turn";
		int outputTokens = (this.last != null) ? this.last.completionTokens() : 0;
		events.add(event("message_delta", "\"delta\":{\"stop_reason\":\"" + stopReason
				+ "\",\"stop_sequence\":null},\"usage\":" + this.json.usage(outputTokens)));
		events.add(event("message_stop", ""));
		return events;
	}

	@Override
	public List<String> error(String message) {
		return List.of("event: error\ndata: " + MessagesJson.streamError(message) + "\n\n");
	}

	@Override
	public List<String> dropped(ChoiceOutput first) {
		return error("Simulated engine error before the first token (X-Sim-Error-Before-First)");
	}

	private static String event(String type, String fields) {
		return "event: " + type + "\ndata: {\"type\":\"" + type + "\"" + (fields.isEmpty() ? "" : "," + fields)
				+ "}\n\n";
	}

}
