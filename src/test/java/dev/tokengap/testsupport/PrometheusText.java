package dev.tokengap.testsupport;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;

/**
 * A scraped Prometheus text exposition, parsed enough for assertions on sample values.
 */
public final class PrometheusText {

	private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	private final String text;

	private final List<Sample> samples = new ArrayList<>();

	public PrometheusText(String text) {
		this.text = text;
		for (String line : text.split("\n")) {
			if (!line.isBlank() && !line.startsWith("#")) {
				this.samples.add(Sample.parse(line));
			}
		}
	}

	/**
	 * Reads tokengap's real {@code /actuator/prometheus} over HTTP, on loopback.
	 * @param managementPort the management port
	 * @return the parsed exposition
	 */
	public static PrometheusText scrape(int managementPort) {
		return scrape("http://127.0.0.1:" + managementPort);
	}

	/**
	 * Reads tokengap's real {@code /actuator/prometheus} over HTTP.
	 * @param managementUrl the management server's base URL, such as a container's mapped
	 * port
	 * @return the parsed exposition
	 */
	public static PrometheusText scrape(String managementUrl) {
		return new PrometheusText(get(managementUrl + "/actuator/prometheus"));
	}

	/**
	 * Writes a registry in the text format, as {@code /actuator/prometheus} would,
	 * without HTTP.
	 * @param registry the registry
	 * @return the parsed exposition
	 */
	public static PrometheusText scrape(PrometheusRegistry registry) {
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		try {
			PrometheusTextFormatWriter.create().write(out, registry.scrape());
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		return new PrometheusText(out.toString(StandardCharsets.UTF_8));
	}

	/**
	 * GETs a management endpoint (or an engine's {@code /metrics}) that must answer 200,
	 * in the text format (0.0.4) when it is an exposition.
	 * @param managementPort the port on loopback
	 * @param path the endpoint's path, such as {@code /actuator/spikes}
	 * @return the body
	 */
	public static String get(int managementPort, String path) {
		return get("http://127.0.0.1:" + managementPort + path);
	}

	private static String get(String url) {
		try {
			HttpRequest request = HttpRequest.newBuilder(URI.create(url))
				.header("Accept", "text/plain;version=0.0.4, */*;q=0.1")
				.timeout(Duration.ofSeconds(20))
				.build();
			HttpResponse<String> response = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
			if (response.statusCode() != 200) {
				throw new AssertionError(url + " answered " + response.statusCode() + ": " + response.body());
			}
			return response.body();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	public String text() {
		return this.text;
	}

	public List<Sample> samples() {
		return this.samples;
	}

	/**
	 * Sum of the samples named {@code name} whose labels include all the given pairs.
	 * @param name the sample name
	 * @param labels alternating label names and values
	 * @return the sum, 0 when none match
	 */
	public double value(String name, String... labels) {
		return matching(name, labels).stream().mapToDouble(Sample::value).sum();
	}

	public List<Sample> matching(String name, String... labels) {
		List<Sample> result = new ArrayList<>();
		for (Sample sample : this.samples) {
			if (sample.name().equals(name) && sample.has(labels)) {
				result.add(sample);
			}
		}
		return result;
	}

	/**
	 * The {@code le} label values of a histogram's buckets for the given labels, in
	 * order.
	 */
	public List<String> les(String histogram, String... labels) {
		return matching(histogram + "_bucket", labels).stream().map((s) -> s.labels().get("le")).toList();
	}

	/** One sample line. */
	public record Sample(String name, Map<String, String> labels, double value) {

		boolean has(String... pairs) {
			for (int i = 0; i < pairs.length; i += 2) {
				if (!pairs[i + 1].equals(this.labels.get(pairs[i]))) {
					return false;
				}
			}
			return true;
		}

		static Sample parse(String line) {
			int brace = line.indexOf('{');
			int space;
			String name;
			Map<String, String> labels = new LinkedHashMap<>();
			if (brace >= 0 && brace < line.indexOf(' ')) {
				name = line.substring(0, brace);
				int i = brace + 1;
				while (line.charAt(i) != '}') {
					int eq = line.indexOf('=', i);
					String key = line.substring(i, eq).trim();
					StringBuilder value = new StringBuilder();
					int j = eq + 2;
					while (line.charAt(j) != '"') {
						if (line.charAt(j) == '\\') {
							j++;
							char c = line.charAt(j);
							value.append(c == 'n' ? '\n' : c);
						}
						else {
							value.append(line.charAt(j));
						}
						j++;
					}
					labels.put(key, value.toString());
					i = j + 1;
					if (line.charAt(i) == ',') {
						i++;
					}
				}
				space = i + 1;
			}
			else {
				space = line.indexOf(' ');
				name = line.substring(0, space);
			}
			String[] rest = line.substring(space).trim().split("\\s+");
			return new Sample(name, labels, parseValue(rest[0]));
		}

		private static double parseValue(String v) {
			return switch (v) {
				case "+Inf" -> Double.POSITIVE_INFINITY;
				case "-Inf" -> Double.NEGATIVE_INFINITY;
				case "NaN" -> Double.NaN;
				default -> Double.parseDouble(v);
			};
		}

	}

}
