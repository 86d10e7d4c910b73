package dev.tokengap.sim;

/**
 * One engine output of one choice ({@code n}) of a request.
 *
 * @param choice the choice's 0-based index
 * @param token the engine's output
 */
record ChoiceOutput(int choice, TokenOutput token) {

	int index() {
		return this.token.index();
	}

	boolean last() {
		return this.token.last();
	}

	/** The same output as if more were to follow, for an event sent ahead of its own. */
	ChoiceOutput withoutEnd() {
		TokenOutput t = this.token;
		return new ChoiceOutput(this.choice,
				new TokenOutput(t.index(), t.text(), null, t.promptTokens(), t.completionTokens(), null));
	}

}
