package dev.tokengap.deploy;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import dev.tokengap.testsupport.EnginePoolSeries;
import dev.tokengap.testsupport.MetricsContract;
import dev.tokengap.testsupport.ProjectFiles;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The README's metrics section against {@code docs/metrics-contract.md}: every series,
 * outcome and endpoint label of the contract is named, goodput has the contract's
 * denominator, and no contract series is marked planned (MetricsContractTests keeps every
 * one registered).
 */
class ReadmeTests {

	private static final Pattern ENDPOINTS = Pattern.compile("^- `endpoint`: (.+)$", Pattern.MULTILINE);

	private static final Pattern OUTCOME_ROW = Pattern.compile("^\\| `([a-z_]+)` \\| ", Pattern.MULTILINE);

	@Test
	void namesEverySeriesOfTheMetricsContract() {
		String readme = ProjectFiles.read("README.md");
		assertThat(MetricsContract.load().types().keySet()).isNotEmpty()
			.allSatisfy((series) -> assertThat(readme).as("README names %s", series).contains("`" + series));
	}

	@Test
	void namesEveryOutcomeAndEndpointLabelOfTheContract() {
		String readme = ProjectFiles.read("README.md");
		List<String> outcomes = contractOutcomes();
		assertThat(outcomes).contains("completed", "engine_error", "rejected", "invalid", "upstream_error",
				"upstream_timeout", "client_cancelled");
		for (String outcome : outcomes) {
			assertThat(readme).as("README's outcome table has %s", outcome).contains("| `" + outcome + "` |");
		}
		Matcher endpoints = ENDPOINTS.matcher(ProjectFiles.read("docs/metrics-contract.md"));
		assertThat(endpoints.find()).as("the contract lists the endpoint labels").isTrue();
		Matcher label = Pattern.compile("`([a-z_]+)`").matcher(endpoints.group(1));
		while (label.find()) {
			assertThat(readme).as("README's stream shapes name endpoint %s", label.group(1))
				.containsPattern("(?m)^\\| (`[a-z_]+`, )*`" + label.group(1) + "`( \\||, )");
		}
	}

	@Test
	void goodputHasTheContractsDenominator() {
		assertThat(ProjectFiles.read("README.md"))
			.contains("rate(tokengap_streams_total{outcome!~\"client_cancelled|invalid\"}[5m])")
			.doesNotContain("rate(tokengap_streams_total{outcome=\"completed\"}[5m])");
	}

	@Test
	void noContractSeriesIsMarkedPlanned() {
		String readme = ProjectFiles.read("README.md");
		for (String series : MetricsContract.load().types().keySet()) {
			Pattern naming = Pattern.compile("^\\| [^|]*`" + series + "[`{]");
			assertThat(readme.lines().filter((line) -> naming.matcher(line).find())).as("README's rows for %s", series)
				.isNotEmpty()
				.noneMatch((row) -> row.contains("planned"));
		}
	}

	/**
	 * The outcomes of the contract's outcome table (the rows between "Outcomes" and
	 * goodput).
	 */
	private static List<String> contractOutcomes() {
		String contract = ProjectFiles.read("docs/metrics-contract.md");
		int start = contract.indexOf("Outcomes (");
		int end = contract.indexOf("**Smooth-stream goodput**", start);
		assertThat(start).as("the contract's outcome table").isPositive();
		Matcher row = OUTCOME_ROW.matcher(contract.substring(start, end));
		List<String> outcomes = new ArrayList<>();
		while (row.find()) {
			outcomes.add(row.group(1));
		}
		return outcomes;
	}

	@Test
	void namesEveryEnginePoolSeriesTheRulesAndDashboardsRead() {
		String readme = ProjectFiles.read("README.md");
		assertThat(EnginePoolSeries.NAMES).allSatisfy((series) -> assertThat(readme).as("README names %s", series)
			.contains("`" + series.replaceAll("_(count|sum|max)$", "")));
	}

}
