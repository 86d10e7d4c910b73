package dev.tokengap.testsupport;

import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The series of {@code docs/metrics-contract.md}: every {@code tokengap_*} name of its
 * tables with its type, the labels its row names, the section it is in and the bucket
 * edges it gives, so that a dashboard, rule or meter that names anything else fails the
 * build.
 */
public final class MetricsContract {

	private static final Pattern ROW = Pattern
		.compile("^\\|\\s*`(tokengap_[a-z0-9_]+)(?:\\{([^}]*)\\})?`\\s*\\|\\s*(histogram|counter|gauge)\\b");

	/**
	 * A histogram row's type cell may name its buckets: {@code histogram (ITL buckets)}.
	 */
	private static final Pattern NAMED_BUCKETS = Pattern.compile("\\((TTFT|ITL|REQUEST) buckets\\)");

	private static final List<String> PROFILE_FAMILIES = List.of("TTFT", "ITL", "REQUEST");

	private final Map<String, String> types = new LinkedHashMap<>();

	private final Map<String, List<String>> labels = new LinkedHashMap<>();

	private final Map<String, String> sections = new LinkedHashMap<>();

	private final Map<String, String> buckets = new LinkedHashMap<>();

	private final Map<String, List<String>> defaultProfile = new LinkedHashMap<>();

	private MetricsContract(String text) {
		String section = "";
		List<String> header = List.of();
		int defaultColumn = -1;
		for (String line : text.split("\n")) {
			List<String> cells = cells(line);
			if (line.startsWith("## ")) {
				section = line.substring(3).trim();
			}
			else if (line.startsWith("| name |") || line.startsWith("| family |")) {
				header = cells;
				defaultColumn = indexOfDefault(header);
			}
			else if (section.equals("Bucket edges") && PROFILE_FAMILIES.contains(cells.get(0))) {
				if (defaultColumn < 0) {
					throw new IllegalStateException("The contract's bucket edges table names no default profile");
				}
				this.defaultProfile.put(cells.get(0), values(cells.get(defaultColumn)));
			}
			Matcher row = ROW.matcher(line);
			if (row.find()) {
				row(row, cells, header, section);
			}
		}
	}

	private void row(Matcher row, List<String> cells, List<String> header, String section) {
		String name = row.group(1);
		this.types.put(name, row.group(3));
		this.labels.put(name, (row.group(2) != null) ? values(row.group(2)) : List.of());
		this.sections.put(name, section);
		Matcher named = NAMED_BUCKETS.matcher(cells.get(1));
		int column = header.indexOf("buckets");
		if (named.find()) {
			this.buckets.put(name, named.group(1));
		}
		else if (column >= 0 && column < cells.size()) {
			this.buckets.put(name, cells.get(column));
		}
	}

	public static MetricsContract load() {
		return new MetricsContract(ProjectFiles.read("docs/metrics-contract.md"));
	}

	/**
	 * Contract names with their type ({@code histogram}, {@code counter}, {@code gauge}).
	 */
	public Map<String, String> types() {
		return Collections.unmodifiableMap(this.types);
	}

	/** The labels the series' row names ({@code x{a,b}}), none when it names none. */
	public List<String> labels(String series) {
		return this.labels.getOrDefault(series, List.of());
	}

	/** The heading of the contract section whose table has the series. */
	public String section(String series) {
		return this.sections.get(series);
	}

	/**
	 * Returns the bucket family a histogram's edges come from ({@code TTFT}, {@code ITL},
	 * {@code REQUEST}: the bucket profile's), or {@code null} when the contract gives its
	 * own list or none.
	 */
	public String bucketFamily(String series) {
		String buckets = this.buckets.getOrDefault(series, "");
		return PROFILE_FAMILIES.contains(buckets) ? buckets : null;
	}

	/**
	 * Returns a histogram's bucket edges as the contract writes them (the default
	 * profile's for a bucket family), empty when the contract gives none.
	 */
	public List<String> edges(String series) {
		String buckets = this.buckets.get(series);
		if (buckets == null || buckets.isEmpty()) {
			return List.of();
		}
		return PROFILE_FAMILIES.contains(buckets) ? this.defaultProfile.get(buckets) : values(buckets);
	}

	/**
	 * Returns the contract name a scraped series belongs to ({@code x} for
	 * {@code x_bucket}, {@code x_sum} and {@code x_count} of a histogram), or
	 * {@code null} when it is not in the contract.
	 */
	public String familyOf(String series) {
		if ("histogram".equals(this.types.get(series))) {
			return null; // a histogram is only ever queried through its _bucket, _sum or
							// _count
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

	private static List<String> cells(String line) {
		String row = line.strip();
		if (!row.startsWith("|")) {
			return List.of("");
		}
		return Arrays.stream(row.substring(1).split("\\|", -1)).map(String::strip).toList();
	}

	private static int indexOfDefault(List<String> header) {
		for (int i = 0; i < header.size(); i++) {
			if (header.get(i).contains("(default")) {
				return i;
			}
		}
		return -1;
	}

	private static List<String> values(String list) {
		return Arrays.stream(list.split(",")).map(String::strip).filter((v) -> !v.isEmpty()).toList();
	}

}
