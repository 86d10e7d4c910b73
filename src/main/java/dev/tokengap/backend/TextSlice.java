package dev.tokengap.backend;

/**
 * A reusable window onto a longer text: lets the parser hand out names and label values
 * without copying them. Valid only until the parser moves on; {@link #toString()} copies.
 */
final class TextSlice implements CharSequence {

	private CharSequence text = "";

	private int start;

	private int end;

	void set(CharSequence text, int start, int end) {
		this.text = text;
		this.start = start;
		this.end = end;
	}

	@Override
	public int length() {
		return this.end - this.start;
	}

	@Override
	public char charAt(int index) {
		if (index < 0 || index >= length()) {
			throw new IndexOutOfBoundsException(index);
		}
		return this.text.charAt(this.start + index);
	}

	@Override
	public CharSequence subSequence(int from, int to) {
		return toString().subSequence(from, to);
	}

	@Override
	public String toString() {
		return this.text.subSequence(this.start, this.end).toString();
	}

	/**
	 * Compares characters without copying either side.
	 * @param chars any text
	 * @param expected the text to compare with
	 * @return whether both hold the same characters
	 */
	static boolean contentEquals(CharSequence chars, String expected) {
		int length = expected.length();
		if (chars == null || chars.length() != length) {
			return false;
		}
		for (int i = length - 1; i >= 0; i--) {
			if (chars.charAt(i) != expected.charAt(i)) {
				return false;
			}
		}
		return true;
	}

}
