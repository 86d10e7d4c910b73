package dev.tokengap.proxy;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Cost of learning a request's model and stream flag on the event loop: the scanner
 * tokengap uses against the Jackson streaming parse it replaced
 * ({@link RequestFactsTests#jackson}), over a chat request whose one user message is
 * {@code promptBytes} long, in a pooled direct buffer as the proxy holds it. One op = one
 * request.
 *
 * <pre>
 * java -cp target/test-classes:target/classes:$(cat target/test-classpath.txt) org.openjdk.jmh.Main \
 *     RequestFactsBenchmark -f 1 -wi 3 -w 1 -i 5 -r 1 -prof gc
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class RequestFactsBenchmark {

	/**
	 * 200 bytes: a short chat turn; 1 MiB and 16 MiB (tokengap's default limit): long
	 * contexts.
	 */
	@Param({ "200", "1048576", "16777216" })
	public int promptBytes;

	private ByteBuf body;

	private String text;

	@Setup
	public void setUp() {
		StringBuilder prompt = new StringBuilder(this.promptBytes + 64);
		while (prompt.length() < this.promptBytes) {
			prompt.append("Summarize the \\\"design\\\" notes below, keeping every {section} and [list]. ");
		}
		prompt.setLength(this.promptBytes);
		if (prompt.charAt(prompt.length() - 1) == '\\') {
			prompt.setCharAt(prompt.length() - 1, ' ');
		}
		this.text = "{\"messages\":[{\"role\":\"system\",\"content\":\"You are helpful.\"},{\"role\":\"user\",\"content\":\""
				+ prompt + "\"}],\"model\":\"meta-llama/Llama-3.1-8B-Instruct\",\"max_tokens\":256,\"temperature\":0.7,"
				+ "\"stream\":true,\"stream_options\":{\"include_usage\":true}}";
		byte[] bytes = this.text.getBytes(StandardCharsets.UTF_8);
		this.body = PooledByteBufAllocator.DEFAULT.directBuffer(bytes.length);
		this.body.writeBytes(bytes);
	}

	@TearDown
	public void tearDown() {
		this.body.release();
	}

	@Benchmark
	public RequestFacts scan() {
		return RequestFacts.of(this.body);
	}

	@Benchmark
	public RequestFacts jacksonAsBefore() {
		return JacksonFacts.of(this.body);
	}

}
