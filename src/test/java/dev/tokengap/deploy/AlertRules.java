package dev.tokengap.deploy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.yaml.snakeyaml.Yaml;

/**
 * The alert rules of the one rules file, {@code helm/tokengap/files/tokengap-rules.yaml}.
 */
final class AlertRules {

	static final String FILE = "helm/tokengap/files/tokengap-rules.yaml";

	private AlertRules() {
	}

	record Alert(String name, String expr, String forDuration, Map<String, String> labels,
			Map<String, String> annotations) {
	}

	@SuppressWarnings("unchecked")
	static List<Alert> load() {
		Map<String, Object> file = new Yaml().load(ProjectFiles.read(FILE));
		List<Alert> alerts = new ArrayList<>();
		for (Map<String, Object> group : (List<Map<String, Object>>) file.get("groups")) {
			for (Map<String, Object> rule : (List<Map<String, Object>>) group.get("rules")) {
				alerts.add(new Alert((String) rule.get("alert"), ((String) rule.get("expr")).strip(),
						String.valueOf(rule.get("for")), (Map<String, String>) rule.get("labels"),
						(Map<String, String>) rule.get("annotations")));
			}
		}
		return alerts;
	}

}
