package dev.tokengap.bench;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.ByteProcessor;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import dev.tokengap.sse.SseEventKind;
import dev.tokengap.sse.SseEventScanner;

/**
 * Cost of scanning one SSE event: a real vLLM chat chunk (one token of content), fed byte
 * by byte as a byte array and, as {@code ResponseRelay} does it, through
 * {@code ByteBuf.forEachByte} over a pooled direct buffer. One op = one event. Target: 0
 * bytes allocated per op.
 *
 * <pre>
 * java -cp target/test-classes:target/classes:$(cat target/test-classpath.txt) \
 *     dev.tokengap.bench.SseScannerBenchmark
 * </pre>
 *
 * (with no arguments: 1 fork, 3 warm-up and 5 measured iterations of 1 s,
 * {@code -prof gc}).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class SseScannerBenchmark {

	/** As vLLM 0.11 writes a chat chunk: every field present, one token of content. */
	static final String CHAT_CHUNK = "data: {\"id\":\"chatcmpl-8b7a6c1f4e2d4c9a9d0e5f3b2a1c0d9e\","
			+ "\"object\":\"chat.completion.chunk\",\"created\":1748945123,"
			+ "\"model\":\"meta-llama/Llama-3.1-8B-Instruct\",\"choices\":[{\"index\":0,"
			+ "\"delta\":{\"content\":\" latency\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n";

	/**
	 * As vLLM writes a Responses API text delta: an event field, then the JSON with its
	 * type last.
	 */
	static final String RESPONSES_DELTA = "event: response.output_text.delta\ndata: {\"content_index\":0,"
			+ "\"delta\":\" latency\",\"item_id\":\"msg_8b7a6c1f4e2d4c9a9d0e5f3b2a1c0d9e\",\"logprobs\":[],"
			+ "\"output_index\":0,\"sequence_number\":42,\"type\":\"response.output_text.delta\"}\n\n";

	private final SseEventScanner scanner = new SseEventScanner();

	private byte[] responsesBytes;

	private final Relay relay = new Relay(this.scanner);

	private byte[] bytes;

	private ByteBuf buf;

	@Setup
	public void setUp() {
		this.bytes = CHAT_CHUNK.getBytes(StandardCharsets.UTF_8);
		this.responsesBytes = RESPONSES_DELTA.getBytes(StandardCharsets.UTF_8);
		this.buf = PooledByteBufAllocator.DEFAULT.directBuffer(this.bytes.length);
		this.buf.writeBytes(this.bytes);
	}

	@TearDown
	public void tearDown() {
		this.buf.release();
	}

	/** The scanner alone. */
	@Benchmark
	public SseEventKind scanChatChunk() {
		SseEventKind last = null;
		for (byte b : this.bytes) {
			SseEventKind kind = this.scanner.accept(b);
			if (kind != null) {
				last = kind;
			}
		}
		return last;
	}

	/** The scanner alone, on a Responses API delta (event type matched at dispatch). */
	@Benchmark
	public SseEventKind scanResponsesDelta() {
		SseEventKind last = null;
		for (byte b : this.responsesBytes) {
			SseEventKind kind = this.scanner.accept(b);
			if (kind != null) {
				last = kind;
			}
		}
		return last;
	}

	/**
	 * As the relay scans an upstream buffer: forEachByte with itself as the processor.
	 */
	@Benchmark
	public int scanByteBufAsTheRelayDoes() {
		this.relay.content = 0;
		this.buf.forEachByte(this.relay);
		return this.relay.content;
	}

	/** The relay's {@code process(byte)}: count content events, keep the usage count. */
	static final class Relay implements ByteProcessor {

		private final SseEventScanner scanner;

		int content;

		long tokens = -1;

		Relay(SseEventScanner scanner) {
			this.scanner = scanner;
		}

		@Override
		public boolean process(byte value) {
			SseEventKind kind = this.scanner.accept(value);
			if (kind != null) {
				if (kind.isContent()) {
					this.content++;
				}
				long t = this.scanner.outputTokens();
				if (t >= 0) {
					this.tokens = t;
				}
			}
			return true;
		}

	}

	public static void main(String[] args) throws Exception {
		org.openjdk.jmh.Main
			.main((args.length > 0) ? args : new String[] { SseScannerBenchmark.class.getSimpleName(), "-prof", "gc" });
	}

}
