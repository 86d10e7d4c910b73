package dev.tokengap.sim;

import java.util.ArrayList;
import java.util.List;

/**
 * The chat and completions stream shape: {@code data:} events only; for chat a role
 * prelude per choice with the first token, deltas of {@code reasoning}, {@code content}
 * or {@code tool_calls}; one chunk per choice per engine output; the usage chunk (with
 * the per-request metrics when asked for) and {@code [DONE]} at the end, also after an
 * in-band error.
 */
final class OpenAiStream implements StreamShape {

	static final String DONE = "data: [DONE]\n\n";

	private final OpenAiJson json;

	private final String[] toolCallIds;

	private final int[] completionTokens;

	private boolean preludeSent;

	/**
	 * The engine timestamps that came with the last output, for the per-request metrics.
	 */
	private RequestTimings timings;

	OpenAiStream(OpenAiJson json) {
		this.json = json;
		this.toolCallIds = new String[json.choices()];
		this.completionTokens = new int[json.choices()];
	}

	@Override
	public List<String> of(ChoiceOutput output) {
		List<String> events = new ArrayList<>(this.json.choices() + 2);
		addPreludes(events);
		this.completionTokens[output.choice()] = output.token().completionTokens();
		if (output.token().timings() != null) {
			this.timings = output.token().timings();
		}
		if (!this.json.chat()) {
			events.add(event(this.json.textChunk(output)));
			return events;
		}
		ContentPlan plan = this.json.plan();
		int index = output.index();
		if (plan.firstArgument(index)) {
			this.toolCallIds[output.choice()] = OpenAiJson.toolCallId();
			events.add(event(this.json.chatChunk(output.withoutEnd(), toolCallStart(output.choice()))));
		}
		events.add(event(this.json.chatChunk(output, delta(output))));
		return events;
	}

	private void addPreludes(List<String> events) {
		if (this.json.chat() && !this.preludeSent) {
			this.preludeSent = true;
			for (int choice = 0; choice < this.json.choices(); choice++) {
				events.add(event(this.json.prelude(choice)));
			}
		}
	}

	private String delta(ChoiceOutput output) {
		ContentPlan plan = this.json.plan();
		TokenOutput token = output.token();
		if (plan.reasoning(token.index())) {
			return "{\"reasoning\":" + OpenAiJson.quote(token.text()) + "}";
		}
		if (plan.calls()) {
			return "{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":"
					+ OpenAiJson.quote(plan.argumentsFragment(token)) + "}}]}";
		}
		return "{\"content\":" + OpenAiJson.quote(token.text()) + "}";
	}

	/** The first tool call delta: id, type and name, with empty arguments. */
	private String toolCallStart(int choice) {
		return "{\"tool_calls\":[{\"id\":" + OpenAiJson.quote(this.toolCallIds[choice])
				+ ",\"type\":\"function\",\"index\":0,\"function\":{\"name\":"
				+ OpenAiJson.quote(this.json.plan().toolName()) + ",\"arguments\":\"\"}}]}";
	}

	@Override
	public List<String> end() {
		if (!this.json.includeUsage()) {
			return List.of(DONE);
		}
		int total = 0;
		for (int tokens : this.completionTokens) {
			total += tokens;
		}
		return List.of(event(this.json.usageChunk(total, this.timings)), DONE);
	}

	@Override
	public List<String> error(String message) {
		return List.of(event(SseResponder.openAiError(message)), DONE);
	}

	@Override
	public List<String> dropped(ChoiceOutput first) {
		List<String> events = new ArrayList<>(this.json.choices() + 1);
		addPreludes(events);
		events.add(DONE);
		return events;
	}

	private static String event(String data) {
		return "data: " + data + "\n\n";
	}

}
