package dev.tokengap.deploy;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Just enough PromQL for the dashboard and rule tests: the series an expression names,
 * the selectors it uses, Grafana's variable substitution, and the "signals" of an alert
 * expression (what it compares, which must return data even while the alert is silent).
 */
final class PromQl {

	private static final Pattern SERIES = Pattern.compile(
			"(?<![A-Za-z0-9_:\"$])(tokengap_[A-Za-z0-9_]+|vllm:[A-Za-z0-9_:]+|reactor_netty_connection_provider_[A-Za-z0-9_]+|up)(?![A-Za-z0-9_:(])");

	/** A recorded series, named level:metric:operations as the rules file does. */
	private static final Pattern RECORDED = Pattern
		.compile("(?<![A-Za-z0-9_:\"$])([a-z][a-z0-9_]*:(?:tokengap|vllm)_[a-z0-9_]+:[a-z0-9_]+)(?![A-Za-z0-9_:(])");

	private static final Pattern RECORDED_SELECTOR = Pattern
		.compile("([a-z][a-z0-9_]*:(?:tokengap|vllm)_[a-z0-9_]+:[a-z0-9_]+)\\s*\\{([^}]*)\\}");

	private static final Pattern SELECTOR = Pattern.compile(
			"(tokengap_[A-Za-z0-9_]+|vllm:[A-Za-z0-9_:]+|reactor_netty_connection_provider_[A-Za-z0-9_]+)\\s*\\{([^}]*)\\}");

	/**
	 * Grafana's variables; {@code $1} is label_replace's capture reference, not a
	 * variable.
	 */
	private static final Pattern VARIABLE = Pattern.compile("\\$\\{(\\w+)(?::\\w+)?\\}|\\$([A-Za-z_]\\w*)");

	private static final String[] COMPARISONS = { "==", "!=", ">=", "<=", ">", "<" };

	private static final String[] SET_OPERATORS = { "and", "or", "unless" };

	private PromQl() {
	}

	/**
	 * The {@code tokengap_*}, {@code vllm:*}, engine pool
	 * ({@code reactor_netty_connection_provider_*}) and {@code up} series the expression
	 * names.
	 */
	static Set<String> series(String expr) {
		Set<String> names = new LinkedHashSet<>();
		Matcher matcher = SERIES.matcher(stripStrings(expr));
		while (matcher.find()) {
			names.add(matcher.group(1));
		}
		return names;
	}

	/** The recorded series (of the rules file's recording rules) the expression names. */
	static Set<String> recorded(String expr) {
		Set<String> names = new LinkedHashSet<>();
		Matcher matcher = RECORDED.matcher(stripStrings(expr));
		while (matcher.find()) {
			names.add(matcher.group(1));
		}
		return names;
	}

	/**
	 * Each {@code name{matchers}} selector of a recorded series: name -> matcher text.
	 */
	static List<Map.Entry<String, String>> recordedSelectors(String expr) {
		List<Map.Entry<String, String>> selectors = new ArrayList<>();
		Matcher matcher = RECORDED_SELECTOR.matcher(expr);
		while (matcher.find()) {
			selectors.add(Map.entry(matcher.group(1), matcher.group(2)));
		}
		return selectors;
	}

	/**
	 * Each {@code name{matchers}} selector of a tokengap or vLLM series: name -> matcher
	 * text.
	 */
	static List<Map.Entry<String, String>> selectors(String expr) {
		List<Map.Entry<String, String>> selectors = new ArrayList<>();
		Matcher matcher = SELECTOR.matcher(expr);
		while (matcher.find()) {
			selectors.add(Map.entry(matcher.group(1), matcher.group(2)));
		}
		return selectors;
	}

	/**
	 * Replaces Grafana's {@code $name} and {@code ${name}} variables; an unknown variable
	 * fails.
	 */
	static String substitute(String expr, Map<String, String> values) {
		Matcher matcher = VARIABLE.matcher(expr);
		StringBuilder out = new StringBuilder();
		while (matcher.find()) {
			String name = (matcher.group(1) != null) ? matcher.group(1) : matcher.group(2);
			String value = values.get(name);
			if (value == null) {
				throw new IllegalArgumentException("unknown variable $" + name + " in " + expr);
			}
			matcher.appendReplacement(out, Matcher.quoteReplacement(value));
		}
		matcher.appendTail(out);
		return out.toString();
	}

	/**
	 * The selector with one more matcher, {@code label="value"} (the value quoted as
	 * PromQL strings are).
	 */
	static String withMatcher(String selector, String label, String value) {
		String matcher = label + "=\"" + value.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
		int brace = selector.lastIndexOf('}');
		if (brace < 0) {
			return selector + "{" + matcher + "}";
		}
		String head = selector.substring(0, brace).strip();
		return head + (head.endsWith("{") ? "" : ", ") + matcher + "}";
	}

	/**
	 * The signals of an alert expression: for each operand of a top-level
	 * {@code and}/{@code or}/ {@code unless}, {@code (lhs) - (rhs)} of its top-level
	 * comparison, the argument of an {@code absent(...)}, or the operand itself. Each
	 * returns data whenever the series it compares exist and join, whether or not the
	 * alert fires.
	 */
	static List<String> signals(String expr) {
		List<String> signals = new ArrayList<>();
		for (String operand : splitTopLevel(expr.strip())) {
			String part = unwrap(operand.strip());
			if (part.startsWith("absent(") && closingParen(part, "absent".length()) == part.length() - 1) {
				signals.add(part.substring("absent(".length(), part.length() - 1).strip());
				continue;
			}
			int[] comparison = topLevelComparison(part);
			if (comparison == null) {
				signals.add(part);
			}
			else {
				String lhs = part.substring(0, comparison[0]).strip();
				String rhs = part.substring(comparison[0] + comparison[1]).strip();
				signals.add(parenthesized(lhs) + " - " + parenthesized(rhs));
			}
		}
		return signals;
	}

	private static List<String> splitTopLevel(String expr) {
		List<String> parts = new ArrayList<>();
		int start = 0;
		int[] found;
		while ((found = firstTopLevel(expr, start, (i) -> setOperatorAt(expr, i))) != null) {
			parts.add(expr.substring(start, found[0]));
			start = found[0] + found[1];
		}
		parts.add(expr.substring(start));
		return parts;
	}

	/**
	 * The first operator at or after {@code from} that stands outside strings, label
	 * braces, parentheses and brackets.
	 * @return {index, length}, or null when there is none
	 */
	private static int[] firstTopLevel(String expr, int from, java.util.function.IntFunction<String> operatorAt) {
		int depth = 0;
		boolean inBraces = false;
		for (int i = from; i < expr.length(); i++) {
			char c = expr.charAt(i);
			if (c == '"') {
				i = endOfString(expr, i);
				continue;
			}
			if (c == '{') {
				inBraces = true;
			}
			else if (c == '}') {
				inBraces = false;
			}
			else if (c == '(' || c == '[') {
				depth++;
			}
			else if (c == ')' || c == ']') {
				depth--;
			}
			else if (depth == 0 && !inBraces) {
				String operator = operatorAt.apply(i);
				if (operator != null) {
					return new int[] { i, operator.length() };
				}
			}
		}
		return null;
	}

	private static String setOperatorAt(String expr, int i) {
		if (i > 0 && isWordChar(expr.charAt(i - 1))) {
			return null;
		}
		for (String keyword : SET_OPERATORS) {
			int end = i + keyword.length();
			if (end <= expr.length() && expr.substring(i, end).toLowerCase(Locale.ROOT).equals(keyword)
					&& (end == expr.length() || !isWordChar(expr.charAt(end)))) {
				return keyword;
			}
		}
		return null;
	}

	private static int[] topLevelComparison(String expr) {
		return firstTopLevel(expr, 0, (i) -> {
			for (String op : COMPARISONS) {
				if (expr.startsWith(op, i)) {
					return op;
				}
			}
			return null;
		});
	}

	private static String parenthesized(String expr) {
		return (expr.startsWith("(") && closingParen(expr, 0) == expr.length() - 1) ? expr : "(" + expr + ")";
	}

	/**
	 * Drops parentheses around the whole operand, e.g. {@code (a > b)} -> {@code a > b}.
	 */
	private static String unwrap(String operand) {
		String part = operand;
		while (part.startsWith("(") && closingParen(part, 0) == part.length() - 1) {
			part = part.substring(1, part.length() - 1).strip();
		}
		return part;
	}

	private static int closingParen(String expr, int open) {
		int depth = 0;
		for (int i = open; i < expr.length(); i++) {
			char c = expr.charAt(i);
			if (c == '"') {
				i = endOfString(expr, i);
			}
			else if (c == '(') {
				depth++;
			}
			else if (c == ')' && --depth == 0) {
				return i;
			}
		}
		return -1;
	}

	private static int endOfString(String expr, int quote) {
		for (int i = quote + 1; i < expr.length(); i++) {
			if (expr.charAt(i) == '\\') {
				i++;
			}
			else if (expr.charAt(i) == '"') {
				return i;
			}
		}
		return expr.length();
	}

	private static String stripStrings(String expr) {
		return expr.replaceAll("\"(?:\\\\.|[^\"\\\\])*\"", "\"\"");
	}

	private static boolean isWordChar(char c) {
		return Character.isLetterOrDigit(c) || c == '_' || c == ':';
	}

}
