package dev.tokengap.backend;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import dev.tokengap.backend.PrometheusTextParser.Sample;
import dev.tokengap.testsupport.PrometheusText;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;
import static org.junit.jupiter.params.provider.Arguments.arguments;

class PrometheusTextParserTests {

	private final PrometheusTextParser parser = new PrometheusTextParser();

	static Stream<Arguments> expositions() {
		return Stream.of(arguments("gauge", "a 1\n", "a 1.0", 0),
				arguments("colon name and labels", "vllm:num_requests_running{engine=\"0\",model_name=\"m\"} 8.0\n",
						"vllm:num_requests_running{engine=0, model_name=m} 8.0", 0),
				arguments("no final newline", "a 1", "a 1.0", 0), arguments("empty braces", "a{} 1\n", "a 1.0", 0),
				arguments("trailing comma", "a{x=\"1\",} 1\n", "a{x=1} 1.0", 0),
				arguments("blanks between tokens", "  a { x = \"1\" , y=\"2\" }\t\t3 \n", "a{x=1, y=2} 3.0", 0),
				arguments("escaped quote", "a{x=\"say \\\"hi\\\"\"} 1\n", "a{x=say \"hi\"} 1.0", 0),
				arguments("escaped backslash", "a{x=\"C:\\\\dir\"} 1\n", "a{x=C:\\dir} 1.0", 0),
				arguments("escaped newline", "a{x=\"two\\nlines\"} 1\n", "a{x=two\nlines} 1.0", 0),
				arguments("escapes in two values", "a{x=\"\\\\\",y=\"plain\",z=\"\\\"\"} 1\n",
						"a{x=\\, y=plain, z=\"} 1.0", 0),
				arguments("comma, brace and hash in a value", "a{x=\"a,b}c # d\"} 1\n", "a{x=a,b}c # d} 1.0", 0),
				arguments("UTF-8 value", "a{model_name=\"Llama-ü-模型\"} 1\n", "a{model_name=Llama-ü-模型} 1.0", 0),
				arguments("NaN and infinities", "a NaN\nb +Inf\nc -Inf\nd Inf\ne nan\n",
						"a NaN | b Infinity | c -Infinity | d Infinity | e NaN", 0),
				arguments("exponents", "a 1.5e3\nb 1.7769301736864529e+09\nc -2E-3\nd 1e400\ne 5e-400\n",
						"a 1500.0 | b 1.7769301736864529E9 | c -0.002 | d Infinity | e 0.0", 0),
				arguments("signs and bare points", "a +1\nb .5\nc 5.\nd -0.0\n", "a 1.0 | b 0.5 | c 5.0 | d -0.0", 0),
				arguments("integer millisecond timestamps (text format)", "a 1 1395066363000\nb 2 -10\n",
						"a 1.0 @1395066363000 | b 2.0 @-10", 0),
				arguments("float second timestamp without # EOF", "a 1 1520879607.789\n", "a 1.0 @1520879607789", 0),
				arguments("OpenMetrics with # EOF, float and integer second timestamps",
						"# TYPE a counter\n# UNIT a seconds\n# HELP a help\na_total 1 1520879607.789\n"
								+ "a_created 1.520879607e9 1520879607\n# EOF\n",
						"a_total 1.0 @1520879607789 | a_created 1.520879607E9 @1520879607000", 0),
				arguments("OpenMetrics exemplar", "a_bucket{le=\"1\"} 2 # {trace_id=\"abc\"} 0.5 123\n# EOF\n",
						"a_bucket{le=1} 2.0", 0),
				arguments("_created, _total, _bucket, _sum and _count series",
						"r_total 3.0\nr_created 1.7e9\nh_bucket{le=\"0.1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 0.3\nh_count 2\n",
						"r_total 3.0 | r_created 1.7E9 | h_bucket{le=0.1} 1.0 | h_bucket{le=+Inf} 2.0 | h_sum 0.3 | h_count 2.0",
						0),
				arguments("comments of every kind",
						"# HELP a Some \\\\ help\\nmore\n# TYPE a gauge\n# UNIT a bytes\n# a free comment\n#\na 1\n",
						"a 1.0", 0),
				arguments("blank and whitespace-only lines", "\n\na 1\n   \n\t\nb 2\n\n", "a 1.0 | b 2.0", 0),
				arguments("CRLF line ends", "# TYPE a gauge\r\na{x=\"y\"} 1\r\n\r\nb 2 1000\r\n",
						"a{x=y} 1.0 | b 2.0 @1000", 0),
				arguments("empty input", "", "", 0), arguments("only line ends", "\n\r\n\n", "", 0),
				arguments("no value", "a\na{x=\"1\"}\nb 1\n", "b 1.0", 2),
				arguments("no blank before the value", "a{x=\"1\"}1\nb 1\n", "b 1.0", 1),
				arguments("malformed names", "1a 1\n-a 1\na-b 1\n{x=\"1\"} 1\nb 1\n", "b 1.0", 4),
				arguments("malformed labels",
						"a{x=\"1\" 1\na{x=1} 1\na{x=\"1} 1\na{-x=\"1\"} 1\na{x:y=\"1\"} 1\na{,} 1\na{x=\"1\"\"} 1\nb 1\n",
						"b 1.0", 7),
				arguments("unknown escape", "a{x=\"\\q\"} 1\nb 1\n", "b 1.0", 1),
				arguments("escape at the end of the line", "a{x=\"\\\nb 1\n", "b 1.0", 1),
				arguments("malformed values", "a abc\na 1.2.3\na 1e\na 0x10\na --1\na +\na .\na Infinite\nb 1\n",
						"b 1.0", 8),
				arguments("malformed timestamps", "a 1 1.x\na 1 NaN\na 1 2 3\nb 1\n", "b 1.0", 3),
				arguments("lines after # EOF", "a 1\n# EOF\nb 2\n\n", "a 1.0", 1));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("expositions")
	void readsEverySampleAndCountsMalformedLines(String description, String text, String expected, int malformed) {
		List<String> samples = new ArrayList<>();
		int skipped = this.parser.parse(text, (name, labels, value, timestamp) -> samples
			.add(render(new Sample(name.toString(), labels.toMap(), value, timestamp))));
		assertThat(String.join(" | ", samples)).isEqualTo(expected);
		assertThat(skipped).isEqualTo(malformed);
		assertThat(this.parser.malformedLines()).isEqualTo(malformed);
	}

	static Stream<String> fixtures() {
		return Stream.of(MetricsFixtures.V1_FULL, MetricsFixtures.DESIGN_DOC_EXCERPT, MetricsFixtures.PID_EXCERPT);
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("fixtures")
	void readsEverySampleLineOfTheFixtures(String fixture) {
		String text = MetricsFixtures.exposition(fixture);
		List<Sample> samples = this.parser.parse(text);
		List<PrometheusText.Sample> expected = new PrometheusText(text).samples();
		assertThat(this.parser.malformedLines()).isZero();
		assertThat(samples).hasSize(expected.size());
		for (int i = 0; i < samples.size(); i++) {
			assertThat(samples.get(i).name()).isEqualTo(expected.get(i).name());
			assertThat(samples.get(i).labels()).containsExactlyEntriesOf(expected.get(i).labels());
			assertThat(samples.get(i).value()).isEqualTo(expected.get(i).value());
			assertThat(samples.get(i).timestampMillis()).isEqualTo(PrometheusTextParser.NO_TIMESTAMP);
		}
	}

	@Test
	void readsTheFullV1FixtureAsWritten() {
		List<Sample> samples = this.parser.parse(MetricsFixtures.exposition(MetricsFixtures.V1_FULL));
		assertThat(samples).hasSize(353);
		assertThat(samples).filteredOn((sample) -> sample.name().endsWith("_created")).hasSize(36);
		assertThat(samples).filteredOn((sample) -> sample.name().endsWith("_bucket")).hasSize(258);
		assertThat(samples).first()
			.isEqualTo(new Sample("vllm:estimated_flops_per_gpu_total",
					Map.of("engine", "0", "model_name", "meta-llama/Llama-3.1-8B-Instruct"), 0.0,
					PrometheusTextParser.NO_TIMESTAMP));
	}

	@Test
	void treatsTheDesignDocElisionsAsMalformedLines() {
		String raw = MetricsFixtures.raw(MetricsFixtures.DESIGN_DOC_EXCERPT);
		List<Sample> samples = new ArrayList<>();
		int malformed = this.parser.parse(raw, (name, labels, value, timestamp) -> samples.add(null));
		assertThat(malformed).isEqualTo(3);
		assertThat(samples)
			.hasSize(this.parser.parse(MetricsFixtures.exposition(MetricsFixtures.DESIGN_DOC_EXCERPT)).size());
	}

	@Test
	void readsACrLfCopyOfTheFixtureLikeTheOriginal() {
		String text = MetricsFixtures.exposition(MetricsFixtures.V1_FULL);
		assertThat(this.parser.parse(text.replace("\n", "\r\n"))).isEqualTo(this.parser.parse(text));
		assertThat(this.parser.malformedLines()).isZero();
	}

	@Test
	void checksButDoesNotVisitSamplesTheVisitorDoesNotWant() {
		List<String> visited = new ArrayList<>();
		int malformed = this.parser.parse("a 1\nb 2\nb{x=\"1} 3\nc 4\n", new PrometheusTextParser.SampleVisitor() {

			@Override
			public boolean wants(CharSequence name) {
				return !TextSlice.contentEquals(name, "b");
			}

			@Override
			public void sample(CharSequence name, SampleLabels labels, double value, long timestampMillis) {
				visited.add(name.toString());
			}

		});
		assertThat(visited).containsExactly("a", "c");
		assertThat(malformed).isEqualTo(1);
	}

	@Test
	void givesLabelsByNameAndPosition() {
		List<String> seen = new ArrayList<>();
		this.parser.parse("a{engine=\"1\",pid=\"7\\\"\"} 1\n", (name, labels, value, timestamp) -> {
			seen.add(labels.size() + " " + labels.name(1) + "=" + labels.value(1) + " engine=" + labels.get("engine")
					+ " le=" + labels.get("le"));
		});
		assertThat(seen).containsExactly("2 pid=7\" engine=1 le=null");
	}

	@Test
	void countsMalformedLinesOverAllParses() {
		this.parser.parse("a\n", (name, labels, value, timestamp) -> {
		});
		this.parser.parse("b 1\nc\nd\n", (name, labels, value, timestamp) -> {
		});
		assertThat(this.parser.malformedLines()).isEqualTo(3);
	}

	@Test
	void refusesOnlyNullInput() {
		assertThatNullPointerException().isThrownBy(() -> this.parser.parse(null));
		assertThatNullPointerException().isThrownBy(() -> this.parser.parse("a 1", null));
	}

	@ParameterizedTest
	@ValueSource(longs = { 1, 2, 3 })
	@Timeout(30)
	void survivesRandomText(long seed) {
		Random random = new Random(seed);
		String alphabet = "vllm:_abcXYZ019{}=\",\\n# \t\r\n.+-eEInfNaEOF";
		for (int round = 0; round < 1000; round++) {
			StringBuilder text = new StringBuilder();
			for (int i = random.nextInt(2048); i > 0; i--) {
				text.append((round % 4 == 0) ? (char) random.nextInt(0x3000)
						: alphabet.charAt(random.nextInt(alphabet.length())));
			}
			long lines = text.chars().filter((c) -> c == '\n').count() + 1;
			int malformed = this.parser.parse(text, (name, labels, value, timestamp) -> labels.toMap());
			assertThat(malformed).isBetween(0, (int) lines);
		}
	}

	@Test
	@Timeout(30)
	void survivesDamagedFixtures() {
		String original = MetricsFixtures.exposition(MetricsFixtures.V1_FULL);
		Random random = new Random(42);
		for (int round = 0; round < 150; round++) {
			StringBuilder text = new StringBuilder(original);
			for (int damage = 1 + random.nextInt(20); damage > 0; damage--) {
				int at = random.nextInt(text.length());
				switch (random.nextInt(3)) {
					case 0 -> text.deleteCharAt(at);
					case 1 -> text.insert(at, "\"\\{}= #\n".charAt(random.nextInt(8)));
					default -> text.setCharAt(at, (char) random.nextInt(128));
				}
			}
			int[] samples = new int[1];
			int malformed = this.parser.parse(text, (name, labels, value, timestamp) -> samples[0]++);
			assertThat(samples[0] + malformed).isLessThanOrEqualTo(400);
		}
	}

	private static String render(Sample sample) {
		String labels = sample.labels()
			.entrySet()
			.stream()
			.map((entry) -> entry.getKey() + "=" + entry.getValue())
			.collect(Collectors.joining(", ", "{", "}"));
		return sample.name() + (sample.labels().isEmpty() ? "" : labels) + " " + sample.value()
				+ ((sample.timestampMillis() != PrometheusTextParser.NO_TIMESTAMP) ? " @" + sample.timestampMillis()
						: "");
	}

}
