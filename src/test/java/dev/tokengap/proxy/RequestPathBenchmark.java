package dev.tokengap.proxy;

import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import reactor.netty.http.HttpOperations;

import dev.tokengap.metrics.Endpoint;

/**
 * Cost of the {@code endpoint} label per request: {@link RequestPath} against Reactor
 * Netty's {@code fullPath()} ({@link HttpOperations#resolvePath}, a {@link java.net.URI}
 * parse), which tokengap used before. One op = one request.
 *
 * <pre>
 * java -cp target/test-classes:target/classes:$(cat target/test-classpath.txt) org.openjdk.jmh.Main \
 *     RequestPathBenchmark -prof gc
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class RequestPathBenchmark {

	@Param({ "/v1/chat/completions", "/v1/completions?x=1" })
	public String target;

	@Benchmark
	public Endpoint requestPath() {
		return Endpoint.of(RequestPath.of(this.target));
	}

	@Benchmark
	public Endpoint reactorNettyFullPath() {
		return Endpoint.of(HttpOperations.resolvePath(this.target));
	}

}
