package dev.tokengap.backend;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The labels of the sample a {@link PrometheusTextParser.SampleVisitor} is visiting: a
 * reusable view onto the exposition text, valid only during the visit. Names and values
 * are exposed as {@link CharSequence}s that point into the text (or, for values with
 * escapes, into one shared unescaped copy), so reading a sample's labels allocates
 * nothing.
 */
public final class SampleLabels {

	private TextSlice[] names = slices(8);

	private TextSlice[] values = slices(8);

	private int size;

	private final StringBuilder unescaped = new StringBuilder();

	/**
	 * The number of labels.
	 * @return the number of labels
	 */
	public int size() {
		return this.size;
	}

	/**
	 * A label's name, in the order written.
	 * @param index from 0 to {@code size() - 1}
	 * @return the name
	 */
	public CharSequence name(int index) {
		return this.names[checked(index)];
	}

	/**
	 * A label's value, unescaped, in the order written.
	 * @param index from 0 to {@code size() - 1}
	 * @return the value
	 */
	public CharSequence value(int index) {
		return this.values[checked(index)];
	}

	/**
	 * The value of the named label.
	 * @param name a label name
	 * @return the value, or {@code null} when the sample has no such label
	 */
	public CharSequence get(String name) {
		for (int i = 0; i < this.size; i++) {
			if (TextSlice.contentEquals(this.names[i], name)) {
				return this.values[i];
			}
		}
		return null;
	}

	/**
	 * Copies the labels.
	 * @return label names to values, in the order written
	 */
	public Map<String, String> toMap() {
		Map<String, String> map = new LinkedHashMap<>();
		for (int i = 0; i < this.size; i++) {
			map.put(this.names[i].toString(), this.values[i].toString());
		}
		return map;
	}

	@Override
	public String toString() {
		return toMap().toString();
	}

	private int checked(int index) {
		if (index < 0 || index >= this.size) {
			throw new IndexOutOfBoundsException(index);
		}
		return index;
	}

	void clear() {
		this.size = 0;
		this.unescaped.setLength(0);
	}

	/**
	 * Reads {@code name="value",...}} from just after the opening brace.
	 * @return the position after the closing brace, or -1 when the labels are malformed
	 */
	int read(CharSequence text, int start, int end) {
		int p = skipBlanks(text, start, end);
		while (p < end && text.charAt(p) != '}') {
			int nameEnd = labelName(text, p, end);
			if (nameEnd < 0) {
				return -1;
			}
			int nameStart = p;
			p = skipBlanks(text, nameEnd, end);
			if (p >= end || text.charAt(p) != '=') {
				return -1;
			}
			p = skipBlanks(text, p + 1, end);
			if (p >= end || text.charAt(p) != '"') {
				return -1;
			}
			p = value(text, p + 1, end, nameStart, nameEnd);
			if (p < 0) {
				return -1;
			}
			p = skipBlanks(text, p, end);
			if (p < end && text.charAt(p) == ',') {
				p = skipBlanks(text, p + 1, end);
			}
			else if (p >= end || text.charAt(p) != '}') {
				return -1;
			}
		}
		return (p < end) ? p + 1 : -1;
	}

	/**
	 * Reads a quoted value from just after its opening quote; returns the position after
	 * the closing one.
	 */
	private int value(CharSequence text, int start, int end, int nameStart, int nameEnd) {
		for (int p = start; p < end; p++) {
			char c = text.charAt(p);
			if (c == '"') {
				add(text, nameStart, nameEnd).set(text, start, p);
				return p + 1;
			}
			if (c == '\\') {
				return escapedValue(text, start, end, nameStart, nameEnd);
			}
		}
		return -1;
	}

	// The rare value with escapes is copied, unescaped, to the shared buffer.
	private int escapedValue(CharSequence text, int start, int end, int nameStart, int nameEnd) {
		int from = this.unescaped.length();
		for (int p = start; p < end; p++) {
			char c = text.charAt(p);
			if (c == '"') {
				add(text, nameStart, nameEnd).set(this.unescaped, from, this.unescaped.length());
				return p + 1;
			}
			if (c == '\\') {
				if (++p == end) {
					return -1;
				}
				c = switch (text.charAt(p)) {
					case '\\' -> '\\';
					case '"' -> '"';
					case 'n' -> '\n';
					default -> 0;
				};
				if (c == 0) {
					return -1;
				}
			}
			this.unescaped.append(c);
		}
		return -1;
	}

	private TextSlice add(CharSequence text, int nameStart, int nameEnd) {
		if (this.size == this.names.length) {
			this.names = grown(this.names);
			this.values = grown(this.values);
		}
		this.names[this.size].set(text, nameStart, nameEnd);
		return this.values[this.size++];
	}

	private static int labelName(CharSequence text, int start, int end) {
		int p = start;
		if (p >= end || !PrometheusTextParser.isNameStart(text.charAt(p), false)) {
			return -1;
		}
		while (++p < end && PrometheusTextParser.isNameChar(text.charAt(p), false)) {
		}
		return p;
	}

	static int skipBlanks(CharSequence text, int start, int end) {
		int p = start;
		while (p < end && (text.charAt(p) == ' ' || text.charAt(p) == '\t')) {
			p++;
		}
		return p;
	}

	private static TextSlice[] slices(int count) {
		TextSlice[] slices = new TextSlice[count];
		for (int i = 0; i < count; i++) {
			slices[i] = new TextSlice();
		}
		return slices;
	}

	private static TextSlice[] grown(TextSlice[] slices) {
		TextSlice[] grown = Arrays.copyOf(slices, slices.length * 2);
		for (int i = slices.length; i < grown.length; i++) {
			grown[i] = new TextSlice();
		}
		return grown;
	}

}
