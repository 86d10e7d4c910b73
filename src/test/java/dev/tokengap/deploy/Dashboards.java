package dev.tokengap.deploy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import dev.tokengap.testsupport.ProjectFiles;

/**
 * The Grafana dashboards of {@code grafana/}: their panels, the PromQL of every panel
 * target and the queries of their template variables.
 */
final class Dashboards {

	private static final JsonMapper JSON = JsonMapper.builder().build();

	private Dashboards() {
	}

	record Dashboard(Path file, JsonNode json) {

		String name() {
			return this.file.getFileName().toString();
		}

		/** Every panel, rows' nested panels included, rows themselves excluded. */
		List<JsonNode> panels() {
			List<JsonNode> panels = new ArrayList<>();
			collect(this.json.path("panels"), panels);
			return panels;
		}

		List<Query> queries() {
			List<Query> queries = new ArrayList<>();
			for (JsonNode panel : panels()) {
				for (JsonNode target : panel.path("targets")) {
					queries.add(new Query(
							name() + " / " + panel.path("title").asString() + " / " + target.path("refId").asString(),
							target.path("expr").asString(""), panel, target));
				}
			}
			return queries;
		}

		List<JsonNode> variables() {
			List<JsonNode> variables = new ArrayList<>();
			this.json.path("templating").path("list").forEach(variables::add);
			return variables;
		}

		private static void collect(JsonNode panels, List<JsonNode> out) {
			for (JsonNode panel : panels) {
				if ("row".equals(panel.path("type").asString())) {
					collect(panel.path("panels"), out);
				}
				else {
					out.add(panel);
				}
			}
		}

	}

	/** One panel target: where it is (dashboard / panel / refId) and its expression. */
	record Query(String origin, String expr, JsonNode panel, JsonNode target) {

		boolean instant() {
			return this.target.path("instant").asBoolean(false);
		}

	}

	static List<Dashboard> load() {
		try (Stream<Path> files = Files.list(ProjectFiles.path("grafana"))) {
			return files.filter((file) -> file.toString().endsWith(".json"))
				.sorted()
				.map((file) -> new Dashboard(file, JSON.readTree(ProjectFiles.read(file))))
				.toList();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/** A query variable's PromQL (Grafana stores it as a string or as {query: ...}). */
	static String variableQuery(JsonNode variable) {
		JsonNode query = variable.path("query");
		return query.isObject() ? query.path("query").asString() : query.asString();
	}

}
