package dev.tokengap.bench;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import dev.tokengap.backend.EngineSample;
import dev.tokengap.backend.PrometheusTextParser;
import dev.tokengap.backend.SampleLabels;
import dev.tokengap.backend.VllmMetricsReader;

/**
 * Cost of one scrape's parse: vLLM's full V1 {@code /metrics} body (483 lines, 353
 * samples), every sample visited, and the engine state read as the scraper does it.
 *
 * <pre>
 * java -cp target/test-classes:target/classes:$(./mvnw -q dependency:build-classpath \
 *     -Dmdep.outputFile=/dev/stdout -Dmdep.includeScope=test) \
 *     dev.tokengap.bench.ExpositionParserBenchmark
 * </pre>
 *
 * (with no arguments: 1 fork, 3 warm-up and 5 measured iterations of 1 s,
 * {@code -prof gc}; any arguments go to JMH as they are).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class ExpositionParserBenchmark {

	private String text;

	private final PrometheusTextParser parser = new PrometheusTextParser();

	private final VllmMetricsReader reader = new VllmMetricsReader();

	private final SumVisitor visitor = new SumVisitor();

	@Setup
	public void load() throws IOException {
		try (InputStream in = ExpositionParserBenchmark.class
			.getResourceAsStream("/fixtures/vllm-metrics/v1-full.txt")) {
			this.text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
	}

	/** Every sample converted and visited, labels included. */
	@Benchmark
	public double parseEverySample() {
		this.visitor.sum = 0;
		this.parser.parse(this.text, this.visitor);
		return this.visitor.sum;
	}

	/** What a scrape does with the body: the engine state. */
	@Benchmark
	public EngineSample readEngineSample() {
		return this.reader.read(this.text, 1L);
	}

	public static void main(String[] args) throws Exception {
		org.openjdk.jmh.Main.main((args.length > 0) ? args
				: new String[] { ExpositionParserBenchmark.class.getSimpleName(), "-prof", "gc" });
	}

	private static final class SumVisitor implements PrometheusTextParser.SampleVisitor {

		double sum;

		@Override
		public void sample(CharSequence name, SampleLabels labels, double value, long timestampMillis) {
			this.sum += value + name.length() + labels.size();
		}

	}

}
