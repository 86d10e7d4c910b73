package dev.tokengap.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The series of {@code docs/metrics-contract.md}: every {@code tokengap_*} name of its tables with
 * its type, so that a dashboard or rule that names anything else fails the build.
 */
public final class MetricsContract {

	private static final Pattern ROW = Pattern
		.compile("^\\|\\s*`(tokengap_[a-z0-9_]+)(?:\\{[^}]*\\})?`\\s*\\|\\s*(histogram|counter|gauge)\\b", Pattern.MULTILINE);

	private final Map<String, String> types;

	private MetricsContract(Map<String, String> types) {
		this.types = Collections.unmodifiableMap(types);
	}

	public static MetricsContract load() {
		Map<String, String> types = new LinkedHashMap<>();
		Matcher row = ROW.matcher(ProjectFiles.read("docs/metrics-contract.md"));
		while (row.find()) {
			types.put(row.group(1), row.group(2));
		}
		return new MetricsContract(types);
	}

	/** Contract names with their type ({@code histogram}, {@code counter}, {@code gauge}). */
	public Map<String, String> types() {
		return this.types;
	}

	/**
	 * Returns the contract name a scraped series belongs to ({@code x} for {@code x_bucket},
	 * {@code x_sum} and {@code x_count} of a histogram), or {@code null} when it is not in the contract.
	 */
	public String familyOf(String series) {
		if ("histogram".equals(this.types.get(series))) {
			return null; // a histogram is only ever queried through its _bucket, _sum or _count
		}
		if (this.types.containsKey(series)) {
			return series;
		}
		for (String suffix : new String[] { "_bucket", "_sum", "_count" }) {
			if (series.endsWith(suffix)) {
				String base = series.substring(0, series.length() - suffix.length());
				if ("histogram".equals(this.types.get(base))) {
					return base;
				}
			}
		}
		return null;
	}

	/**
	 * Whether this build's code names the series: false for contract series another branch is still
	 * adding (the queries on them are then reported as pending instead of failing).
	 */
	public static boolean implementedInMainSources(String family) {
		String literal = "\"" + family + "\"";
		try (Stream<Path> files = Files.walk(ProjectFiles.path("src/main/java"))) {
			return files.filter((file) -> file.toString().endsWith(".java"))
				.anyMatch((file) -> ProjectFiles.read(file).contains(literal));
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
