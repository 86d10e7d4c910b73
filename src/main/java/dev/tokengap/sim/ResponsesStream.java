package dev.tokengap.sim;

import java.util.ArrayList;
import java.util.List;

/**
 * The {@code /v1/responses} stream shape: {@code event: <type>} and {@code data:} with
 * the same {@code type} and an increasing {@code sequence_number}; a reasoning item, then
 * a message item, each opened, filled with one delta per engine output and closed; no
 * {@code [DONE]}.
 *
 * <pre>
 * response.created, response.in_progress                      (before the prefill)
 * output_item.added, reasoning_part.added, reasoning_text.delta*, reasoning_text.done,
 *     reasoning_part.done, output_item.done                   (reasoning tokens, if any)
 * output_item.added, content_part.added, output_text.delta*, output_text.done,
 *     content_part.done, output_item.done
 * response.completed | response.failed                        (the per-request metrics in completed)
 * </pre>
 */
final class ResponsesStream implements StreamShape {

	private final ResponsesJson json;

	private final List<String> items = new ArrayList<>(2);

	private final StringBuilder text = new StringBuilder();

	private int sequenceNumber;

	private String itemId;

	private boolean reasoningItem;

	private int outputTokens;

	private RequestTimings timings;

	ResponsesStream(ResponsesJson json) {
		this.json = json;
	}

	@Override
	public List<String> start() {
		String response = this.json.response("in_progress", List.of(), -1, null, null);
		return List.of(event("response.created", "\"response\":" + response, ""),
				event("response.in_progress", "\"response\":" + response, ""));
	}

	@Override
	public List<String> of(ChoiceOutput output) {
		List<String> events = new ArrayList<>(4);
		boolean reasoning = this.json.plan().reasoning(output.index());
		if (this.itemId == null || reasoning != this.reasoningItem) {
			close(events);
			open(events, reasoning);
		}
		this.text.append(output.token().text());
		this.outputTokens = output.token().completionTokens();
		this.timings = output.token().timings();
		String delta = contentIndex() + "\"delta\":" + OpenAiJson.quote(output.token().text()) + ","
				+ itemFields(!reasoning);
		events.add(event(reasoning ? "response.reasoning_text.delta" : "response.output_text.delta", delta, ""));
		return events;
	}

	private void open(List<String> events, boolean reasoning) {
		this.reasoningItem = reasoning;
		this.itemId = (reasoning ? "rs_" : "msg_") + CompletionHandler.randomId();
		this.text.setLength(0);
		String item = reasoning ? ResponsesJson.reasoningItem(this.itemId, "in_progress", null)
				: ResponsesJson.messageItem(this.itemId, "in_progress", null);
		events.add(event("response.output_item.added", "\"item\":" + item + "," + outputIndex(), ""));
		String part = reasoning ? ResponsesJson.reasoningPart("") : ResponsesJson.textPart("");
		events.add(event(reasoning ? "response.reasoning_part.added" : "response.content_part.added",
				contentIndex() + itemFields(false) + ",\"part\":" + part, ""));
	}

	private void close(List<String> events) {
		if (this.itemId == null) {
			return;
		}
		String text = this.text.toString();
		boolean reasoning = this.reasoningItem;
		events.add(event(reasoning ? "response.reasoning_text.done" : "response.output_text.done",
				contentIndex() + itemFields(!reasoning), "\"text\":" + OpenAiJson.quote(text) + ","));
		String part = reasoning ? ResponsesJson.reasoningPart(text) : ResponsesJson.textPart(text);
		events.add(event(reasoning ? "response.reasoning_part.done" : "response.content_part.done",
				contentIndex() + itemFields(false) + ",\"part\":" + part, ""));
		String item = reasoning ? ResponsesJson.reasoningItem(this.itemId, "completed", text)
				: ResponsesJson.messageItem(this.itemId, "completed", text);
		events.add(event("response.output_item.done", "\"item\":" + item + "," + outputIndex(), ""));
		this.items.add(item);
		this.itemId = null;
	}

	@Override
	public List<String> end() {
		List<String> events = new ArrayList<>(4);
		close(events);
		String response = this.json.response("completed", this.items, this.outputTokens, null, this.timings);
		events.add(event("response.completed", "\"response\":" + response, ""));
		return events;
	}

	@Override
	public List<String> error(String message) {
		String response = this.json.response("failed", this.items, this.outputTokens, message, null);
		return List.of(event("response.failed", "\"response\":" + response, ""));
	}

	/**
	 * vLLM's own in-band error path on this endpoint is broken upstream: the stream just
	 * ends.
	 */
	@Override
	public List<String> dropped(ChoiceOutput first) {
		return List.of();
	}

	private static String contentIndex() {
		return "\"content_index\":0,";
	}

	/**
	 * {@code "item_id":…,"output_index":…} of the open item, with {@code "logprobs":[]}
	 * between them for text events.
	 */
	private String itemFields(boolean logprobs) {
		return "\"item_id\":" + OpenAiJson.quote(this.itemId) + "," + (logprobs ? "\"logprobs\":[]," : "")
				+ outputIndex();
	}

	private String outputIndex() {
		return "\"output_index\":" + this.items.size();
	}

	/**
	 * One event: the fields sorted before {@code sequence_number}, then the number, then
	 * those after it (ending with a comma), then {@code type}.
	 */
	private String event(String type, String before, String after) {
		return "event: " + type + "\ndata: {" + before + ",\"sequence_number\":" + this.sequenceNumber++ + "," + after
				+ "\"type\":\"" + type + "\"}\n\n";
	}

}
