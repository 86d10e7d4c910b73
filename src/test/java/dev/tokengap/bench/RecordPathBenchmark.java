package dev.tokengap.bench;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import dev.tokengap.attribution.AttributionProperties;
import dev.tokengap.attribution.SpikeAttributor;
import dev.tokengap.backend.EngineHistory;
import dev.tokengap.metrics.BucketEdges;
import dev.tokengap.metrics.Endpoint;
import dev.tokengap.metrics.ExchangeRecorder;
import dev.tokengap.metrics.TokengapMeters;
import dev.tokengap.metrics.W3cRequestTracer;
import dev.tokengap.timing.ContentWrite;
import dev.tokengap.timing.NanoClock;

/**
 * Cost of timing and recording one content event, as {@code ResponseRelay.recordWrite}
 * does per event: {@code bodyWritten} then {@code contentWritten} on an
 * {@link ExchangeRecorder} over a real {@link TokengapMeters} on a fresh
 * {@link PrometheusRegistry}, events 20 ms apart on one long stream;
 * {@code observer=spikes} adds the production gap observer (spike detection), as the
 * application wires it; {@code trace=w3c} gives the stream a trace, so its TTFT, ITL and
 * worst-gap observations may become exemplars (one per bucket per 5 s: virtual events 20
 * ms apart, so nearly every event finds its bucket's exemplar recent). One op = one
 * event. Target: 0 bytes allocated per op.
 *
 * <pre>
 * java -cp target/test-classes:target/classes:$(cat target/test-classpath.txt) \
 *     dev.tokengap.bench.RecordPathBenchmark
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class RecordPathBenchmark {

	private static final long GAP = 20_000_000L;

	@Param({ "none", "spikes" })
	public String observer;

	@Param({ "none", "w3c" })
	public String trace;

	private ExchangeRecorder recorder;

	private SpikeAttributor attributor;

	private final ContentWrite event = new ContentWrite();

	private long now;

	@Setup(Level.Iteration)
	public void setUp() {
		TokengapMeters meters = new TokengapMeters(new PrometheusRegistry(), BucketEdges.VLLM_V1,
				Duration.ofMillis(400).toNanos(), NanoClock.SYSTEM);
		if ("spikes".equals(this.observer)) {
			this.attributor = new SpikeAttributor(
					new AttributionProperties(Duration.ofMillis(100), 4, 200, 1024, 1.5, 0.9, 10, 10_000,
							Duration.ofSeconds(10)),
					new EngineHistory(), meters, NanoClock.SYSTEM, Duration.ofMillis(250), Duration.ofMillis(200));
			meters.gapObserver(this.attributor.detector());
		}
		this.now = 1_000_000_000L;
		this.recorder = new ExchangeRecorder(meters, this.now);
		this.recorder.route("meta-llama/Llama-3.1-8B-Instruct", Endpoint.CHAT_COMPLETIONS);
		if ("w3c".equals(this.trace)) {
			this.recorder.trace(new W3cRequestTracer(1).start(null, null));
		}
		this.recorder.identify("chatcmpl-bench", 128);
		this.recorder.streamStarted();
	}

	@TearDown(Level.Iteration)
	public void tearDown() {
		if (this.attributor != null) {
			this.attributor.close();
		}
	}

	@Benchmark
	public long recordOneContentEvent() {
		long write = this.now += GAP;
		this.recorder.bodyWritten(write);
		this.event.setArrivalNanos(write - 150_000);
		this.event.setWriteStartNanos(write - 100_000);
		this.event.setWriteNanos(write);
		this.recorder.contentWritten(0, this.event);
		return write;
	}

	public static void main(String[] args) throws Exception {
		org.openjdk.jmh.Main
			.main((args.length > 0) ? args : new String[] { RecordPathBenchmark.class.getSimpleName(), "-prof", "gc" });
	}

}
