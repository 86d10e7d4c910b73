package dev.tokengap.bench;

import java.nio.ByteBuffer;
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
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import dev.tokengap.sse.SseEventKind;
import dev.tokengap.sse.SseEventScanner;

/**
 * Cost of scanning one SSE event: a real vLLM chat chunk (one token of content), fed a
 * byte at a time ({@code accept}), a range at a time ({@code scan}), and as
 * {@code ResponseRelay} and {@code StreamTap} do it: the pooled direct buffer Netty read
 * copied into a heap window, then scanned a range at a time. One op = one event. Target:
 * 0 bytes allocated per op.
 * <p>
 * The events of a stream differ in their token text, as a stream's do; the ranged
 * benchmarks therefore measure the scanner with its memo of the start the events share
 * (read up to the token text), which is what a stream costs it. With one event repeated
 * the memo would skip the token text and the rest of the event too.
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
	static final String CHAT_CHUNK = chatChunk(" latency");

	/** The token texts the stream's events carry in turn. */
	private static final String[] TOKENS = { " latency", " is", " what", " the", " client", " sees", ",", " tokens" };

	/**
	 * As vLLM writes a Responses API text delta: an event field, then the JSON with its
	 * type last.
	 */
	static final String RESPONSES_DELTA = "event: response.output_text.delta\ndata: {\"content_index\":0,"
			+ "\"delta\":\" latency\",\"item_id\":\"msg_8b7a6c1f4e2d4c9a9d0e5f3b2a1c0d9e\",\"logprobs\":[],"
			+ "\"output_index\":0,\"sequence_number\":42,\"type\":\"response.output_text.delta\"}\n\n";

	private final SseEventScanner scanner = new SseEventScanner();

	private byte[] responsesBytes;

	private final ByteBuffer window = ByteBuffer.allocate(4096);

	private byte[] bytes;

	/** Each token's event, in a heap buffer and in a pooled direct one. */
	private final ByteBuffer[] events = new ByteBuffer[TOKENS.length];

	private final ByteBuf[] bufs = new ByteBuf[TOKENS.length];

	private int next;

	/** Streams read in turn, each its own scanner, as a proxy's loop serves them. */
	private static final int STREAMS = 1000;

	private final SseEventScanner[] streams = new SseEventScanner[STREAMS];

	private int nextStream;

	/** The token each stream's next event carries. */
	private final int[] streamTokens = new int[STREAMS];

	@Setup
	public void setUp() {
		this.bytes = CHAT_CHUNK.getBytes(StandardCharsets.UTF_8);
		this.responsesBytes = RESPONSES_DELTA.getBytes(StandardCharsets.UTF_8);
		for (int i = 0; i < TOKENS.length; i++) {
			byte[] event = chatChunk(TOKENS[i]).getBytes(StandardCharsets.UTF_8);
			this.events[i] = ByteBuffer.wrap(event);
			this.bufs[i] = PooledByteBufAllocator.DEFAULT.directBuffer(event.length);
			this.bufs[i].writeBytes(event);
		}
		for (int i = 0; i < STREAMS; i++) {
			this.streams[i] = new SseEventScanner();
		}
	}

	@TearDown
	public void tearDown() {
		for (ByteBuf buf : this.bufs) {
			buf.release();
		}
	}

	static String chatChunk(String token) {
		return "data: {\"id\":\"chatcmpl-8b7a6c1f4e2d4c9a9d0e5f3b2a1c0d9e\","
				+ "\"object\":\"chat.completion.chunk\",\"created\":1748945123,"
				+ "\"model\":\"meta-llama/Llama-3.1-8B-Instruct\",\"choices\":[{\"index\":0,"
				+ "\"delta\":{\"content\":\"" + token + "\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n";
	}

	private int nextEvent() {
		int event = this.next;
		this.next = (event + 1) % TOKENS.length;
		return event;
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

	/** The scanner alone, a range at a time. */
	@Benchmark
	public SseEventKind scanChatChunkInRanges() {
		ByteBuffer event = this.events[nextEvent()];
		return scanRanges(event, event.limit());
	}

	/**
	 * As the relay hands an engine read to the stream's tap: copied from the pooled
	 * direct buffer into the loop's heap window, then scanned a range at a time.
	 */
	@Benchmark
	public SseEventKind scanByteBufAsTheRelayDoes() {
		ByteBuf buf = this.bufs[nextEvent()];
		int length = buf.readableBytes();
		buf.getBytes(buf.readerIndex(), this.window.array(), 0, length);
		this.window.clear().limit(length);
		return scanRanges(this.window, length);
	}

	/**
	 * As {@link #scanByteBufAsTheRelayDoes()}, for {@value #STREAMS} streams in turn,
	 * each with its own scanner: what one event costs once the streams' state no longer
	 * fits the processor's nearest caches.
	 */
	@Benchmark
	public SseEventKind scanByteBufOfAThousandStreams() {
		int stream = this.nextStream;
		this.nextStream = (stream + 1) % STREAMS;
		int token = this.streamTokens[stream];
		this.streamTokens[stream] = (token + 1) % TOKENS.length;
		ByteBuf buf = this.bufs[token];
		int length = buf.readableBytes();
		buf.getBytes(buf.readerIndex(), this.window.array(), 0, length);
		this.window.clear().limit(length);
		SseEventScanner scanner = this.streams[stream];
		SseEventKind last = null;
		for (int i = 0; i < length;) {
			i = scanner.scan(this.window, i, length);
			SseEventKind kind = scanner.completed();
			if (kind != null) {
				last = kind;
			}
		}
		return last;
	}

	private SseEventKind scanRanges(ByteBuffer bytes, int length) {
		SseEventKind last = null;
		for (int i = 0; i < length;) {
			i = this.scanner.scan(bytes, i, length);
			SseEventKind kind = this.scanner.completed();
			if (kind != null) {
				last = kind;
			}
		}
		return last;
	}

	public static void main(String[] args) throws Exception {
		org.openjdk.jmh.Main
			.main((args.length > 0) ? args : new String[] { SseScannerBenchmark.class.getSimpleName(), "-prof", "gc" });
	}

}
