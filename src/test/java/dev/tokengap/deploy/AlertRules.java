package dev.tokengap.deploy;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.yaml.snakeyaml.Yaml;

import dev.tokengap.testsupport.ProjectFiles;

/**
 * The recording and alert rules of the one rules file,
 * {@code helm/tokengap/files/tokengap-rules.yaml}.
 */
final class AlertRules {

	static final String FILE = "helm/tokengap/files/tokengap-rules.yaml";

	private AlertRules() {
	}

	record Alert(String name, String expr, String forDuration, Map<String, String> labels,
			Map<String, String> annotations) {
	}

	/** The alerts, each expression without its PromQL comments ({@code # threshold}). */
	static List<Alert> load() {
		List<Alert> alerts = new ArrayList<>();
		for (Map<String, Object> rule : rules()) {
			if (rule.get("alert") != null) {
				alerts.add(new Alert((String) rule.get("alert"), withoutComments((String) rule.get("expr")),
						String.valueOf(rule.get("for")), labels(rule, "labels"), labels(rule, "annotations")));
			}
		}
		return alerts;
	}

	/** The recording rules: recorded name -> expression, in file order. */
	static Map<String, String> recordings() {
		Map<String, String> recordings = new LinkedHashMap<>();
		for (Map<String, Object> rule : rules()) {
			if (rule.get("record") != null) {
				recordings.put((String) rule.get("record"), withoutComments((String) rule.get("expr")));
			}
		}
		return recordings;
	}

	/**
	 * The expression followed by the expressions of every recorded series it reads,
	 * transitively: what it computes from the scraped series.
	 */
	static String expanded(String expr) {
		Map<String, String> recordings = recordings();
		Set<String> seen = new LinkedHashSet<>();
		List<String> todo = new ArrayList<>(PromQl.recorded(expr));
		StringBuilder all = new StringBuilder(expr);
		while (!todo.isEmpty()) {
			String name = todo.remove(0);
			if (seen.add(name)) {
				String definition = recordings.get(name);
				if (definition == null) {
					throw new AssertionError(name + " is not recorded in " + FILE);
				}
				all.append('\n').append(definition);
				todo.addAll(PromQl.recorded(definition));
			}
		}
		return all.toString();
	}

	static String withoutComments(String expr) {
		return expr.replaceAll("[ \\t]*#[^\\n\"]*", "").strip();
	}

	@SuppressWarnings("unchecked")
	private static List<Map<String, Object>> rules() {
		Map<String, Object> file = new Yaml().load(ProjectFiles.read(FILE));
		List<Map<String, Object>> rules = new ArrayList<>();
		for (Map<String, Object> group : (List<Map<String, Object>>) file.get("groups")) {
			rules.addAll((List<Map<String, Object>>) group.get("rules"));
		}
		return rules;
	}

	@SuppressWarnings("unchecked")
	private static Map<String, String> labels(Map<String, Object> rule, String key) {
		Map<String, String> labels = (Map<String, String>) rule.get(key);
		return (labels != null) ? labels : Map.of();
	}

}
