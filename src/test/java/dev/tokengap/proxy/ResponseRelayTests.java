package dev.tokengap.proxy;

import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.EncoderException;
import io.netty.util.ReferenceCountUtil;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.netty.NettyPipeline;
import reactor.test.StepVerifier;

import dev.tokengap.metrics.BucketEdges;
import dev.tokengap.metrics.Endpoint;
import dev.tokengap.metrics.ExchangeRecorder;
import dev.tokengap.metrics.StreamTap;
import dev.tokengap.metrics.TokengapMeters;
import dev.tokengap.testsupport.PrometheusText;
import dev.tokengap.timing.EngineReport;
import dev.tokengap.timing.NanoClock;
import dev.tokengap.timing.ResponseTap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The relay on an embedded client channel whose pipeline can fail a write the way no
 * socket does: a failure that is not I/O must end the stream, not let the relay time
 * events that never reached the client. And what the relay hands the recorder besides
 * timings: the engine's own report, once the event that carried it has been written.
 */
class ResponseRelayTests {

	/** Two content events and [DONE], each in a buffer of its own. */
	private static final List<String> THREE_BUFFERS = List.of(text("one"), text("two"), "data: [DONE]\n\n");

	private final PrometheusRegistry registry = new PrometheusRegistry();

	private final TokengapMeters meters = new TokengapMeters(this.registry, BucketEdges.VLLM_V1, 400_000_000L,
			NanoClock.SYSTEM);

	@Test
	void aWriteThatFailsWithoutClosingTheConnectionEndsTheStreamUntimed() {
		FailingWrite failing = new FailingWrite(2);
		EmbeddedChannel client = new EmbeddedChannel(failing);
		ExchangeRecorder recorder = new ExchangeRecorder(this.meters, System.nanoTime());
		recorder.route("m", Endpoint.CHAT_COMPLETIONS);
		recorder.streamStarted();
		List<ByteBuf> events = List.of(event("one"), event("two"), event("three"));
		try {
			StepVerifier.create(relayed(Flux.fromIterable(events), client, recorder))
				.expectComplete()
				.verify(Duration.ofSeconds(5));
			assertThat(recorder.timer().contentEvents()).as("only the event that reached the client").isEqualTo(1);
			assertThat(client.isOpen()).as("the broken connection is closed").isFalse();
			recorder.close(System.nanoTime(), false);
			assertThat(scrape().value("tokengap_streams_total", "outcome", "upstream_error")).isEqualTo(1);
			assertThat(scrape().value("tokengap_streams_total")).as("exactly one outcome").isEqualTo(1);
			assertThat(failing.failed).as("the write's future carried the failure")
				.isInstanceOf(EncoderException.class);
			ByteBuf written = client.readOutbound();
			assertThat(written.toString(StandardCharsets.UTF_8)).contains("one");
			written.release();
		}
		finally {
			events.forEach(ReferenceCountUtil::safeRelease);
			client.finishAndReleaseAll();
		}
	}

	/**
	 * The tap hears, for each buffer, all its bytes, then that its write started, then,
	 * once the pipeline took it, that it completed; a pipeline that consumes the buffer
	 * as it writes it (as a compressor does) changes nothing of what the tap heard.
	 */
	@Test
	void theTapHearsEachBuffersBytesThenItsWriteStartAndThenItsCompletion() {
		List<String> heard = new ArrayList<>();
		EmbeddedChannel client = new EmbeddedChannel(new ChannelOutboundHandlerAdapter() {
			@Override
			public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
				ByteBuf buf = (ByteBuf) msg;
				heard.add("write " + buf.readableBytes());
				ByteBuf encoded = buf.readBytes(buf.readableBytes());
				buf.release();
				ctx.write(encoded, promise);
			}
		});
		List<ByteBuf> events = List.of(event("one"), event("three"));
		try {
			StepVerifier.create(relayed(Flux.fromIterable(events), client, new OrderTap(heard)))
				.expectComplete()
				.verify(Duration.ofSeconds(5));
			int one = text("one").length();
			int three = text("three").length();
			assertThat(heard).containsExactly("received " + one, "write started", "write " + one, "written",
					"received " + three, "write started", "write " + three, "written", "ended ENGINE_COMPLETED");
			assertThat(readAll(client)).containsExactly(text("one"), text("three"));
		}
		finally {
			events.forEach(ReferenceCountUtil::safeRelease);
			client.finishAndReleaseAll();
		}
	}

	/**
	 * A client whose connection closes during a write: the tap hears the relay's ending
	 * once, as the client gone, and no completion of that write.
	 */
	@Test
	void aClientGoneDuringAWriteEndsTheTapOnceWithoutThatWritesCompletion() {
		List<String> heard = new ArrayList<>();
		EmbeddedChannel client = new EmbeddedChannel(new ChannelOutboundHandlerAdapter() {
			private int writes;

			@Override
			public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
				heard.add("write " + ((ByteBuf) msg).toString(StandardCharsets.UTF_8).length());
				if (++this.writes == 2) {
					ReferenceCountUtil.release(msg);
					ctx.close();
					promise.setFailure(new ClosedChannelException());
					return;
				}
				ctx.write(msg, promise);
			}
		});
		List<ByteBuf> events = List.of(event("one"), event("three"));
		// The engine's buffers come once the relay has started, as they do from a socket.
		Sinks.Many<ByteBuf> engine = Sinks.many().unicast().onBackpressureBuffer();
		try {
			StepVerifier.create(relayed(engine.asFlux(), client, new OrderTap(heard)))
				.then(() -> events.forEach(engine::tryEmitNext))
				.expectComplete()
				.verify(Duration.ofSeconds(5));
			int one = text("one").length();
			int three = text("three").length();
			assertThat(heard).containsExactly("received " + one, "write started", "write " + one, "written",
					"received " + three, "write started", "write " + three, "ended CLIENT_GONE");
			assertThat(events.get(1).refCnt()).as("the relay's retain of the buffer never written, released").isOne();
		}
		finally {
			events.forEach(ReferenceCountUtil::safeRelease);
			client.finishAndReleaseAll();
		}
	}

	/** Notes what it is told, in order, beside the writes the test's pipeline notes. */
	private static final class OrderTap implements ResponseTap {

		private final List<String> heard;

		OrderTap(List<String> heard) {
			this.heard = heard;
		}

		@Override
		public void received(ByteBuffer bytes, long arrivalNanos) {
			this.heard.add("received " + bytes.remaining());
		}

		@Override
		public void writeStarted(long nanos) {
			this.heard.add("write started");
		}

		@Override
		public void written(long nanos) {
			this.heard.add("written");
		}

		@Override
		public void ended(Ending ending, long nanos) {
			this.heard.add("ended " + ending);
		}

	}

	@Test
	void aStreamWhoseWritesAllSucceedIsTimedWhole() {
		assertThat(relayThreeBuffers(new EmbeddedChannel())).isEqualTo(2);
	}

	/**
	 * The proxy port's pipeline as Reactor Netty and {@code ProxyPortConfiguration} build
	 * it: the codec, Reactor Netty's traffic handler (stood in for by a recorder under
	 * its name), then {@link RequestTimeoutHandler}, {@link StrictRequestHandler} and
	 * {@link ResponseHeadFlush}. The relay writes the channel, so every handler that sees
	 * writes sees each body buffer, in order, whatever the pipeline holds.
	 */
	@Test
	void writesTheBodyThroughEveryHandlerOfThePipeline() {
		WriteLog codecSide = new WriteLog();
		WriteLog trafficHandler = new WriteLog();
		EmbeddedChannel client = proxyPipeline(codecSide, NettyPipeline.HttpTrafficHandler, trafficHandler);
		assertThat(relayThreeBuffers(client)).isEqualTo(2);
		assertThat(trafficHandler.texts).containsExactlyElementsOf(THREE_BUFFERS);
		assertThat(codecSide.texts).containsExactlyElementsOf(THREE_BUFFERS);
	}

	/**
	 * Any other handler that sees writes between the codec and the tail (Reactor Netty's
	 * compression when {@code server.compression.enabled}, its access log, a customizer's
	 * own) must see the body as well as the head: then the relay writes the channel.
	 */
	@Test
	void writesTheBodyThroughTheWholePipelineWhenAnotherHandlerWatchesWrites() {
		WriteLog codecSide = new WriteLog();
		WriteLog compressor = new WriteLog();
		EmbeddedChannel client = proxyPipeline(codecSide, "reactor.left.compressionHandler", compressor);
		assertThat(relayThreeBuffers(client)).isEqualTo(2);
		assertThat(compressor.texts).containsExactlyElementsOf(THREE_BUFFERS);
		assertThat(codecSide.texts).containsExactlyElementsOf(THREE_BUFFERS);
	}

	private static EmbeddedChannel proxyPipeline(WriteLog codecSide, String reactorName, WriteLog reactorHandler) {
		EmbeddedChannel client = new EmbeddedChannel();
		client.pipeline()
			.addLast("codec", codecSide)
			.addLast(reactorName, reactorHandler)
			.addLast(RequestTimeoutHandler.NAME, new RequestTimeoutHandler(Duration.ofSeconds(60)))
			.addLast(StrictRequestHandler.NAME, new StrictRequestHandler())
			.addLast(ResponseHeadFlush.NAME, new ResponseHeadFlush());
		return client;
	}

	/**
	 * Relays two content events and [DONE]; returns how many content events were timed.
	 */
	private int relayThreeBuffers(EmbeddedChannel client) {
		ExchangeRecorder recorder = liveRecorder();
		List<ByteBuf> events = THREE_BUFFERS.stream().map(ResponseRelayTests::buffer).toList();
		try {
			relay(client, recorder, events);
			return recorder.timer().contentEvents();
		}
		finally {
			events.forEach(ReferenceCountUtil::safeRelease);
			client.finishAndReleaseAll();
		}
	}

	/**
	 * vLLM's final usage chunk with {@code --enable-per-request-metrics}, split inside
	 * its metrics object across two upstream buffers, then a later event with other
	 * metrics (no engine sends two; the first is the stream's) and {@code [DONE]}, each
	 * in a buffer of its own: the report must reach the recorder after the usage chunk's
	 * last byte was written and before the next buffer's write starts.
	 */
	@Test
	void handsTheEnginesReportToTheRecorderOnceTheEventCarryingItIsWritten() {
		String usage = "data: {\"id\":\"chatcmpl-x\",\"object\":\"chat.completion.chunk\",\"created\":1,"
				+ "\"model\":\"m\",\"choices\":[],\"usage\":{\"prompt_tokens\":42,\"completion_tokens\":128,"
				+ "\"total_tokens\":170},\"metrics\":{\"time_to_first_token_ms\":85.2,\"generation_time_ms\":1240.5,"
				+ "\"queue_time_ms\":12.3,\"mean_itl_ms\":9.1,\"tokens_per_second\":103.2,\"num_preemptions\":1}}\n\n";
		int split = usage.indexOf("\"queue_time_ms\":12") + "\"queue_time_ms\":1".length();
		List<String> upstream = List.of(text("one") + text("two"), usage.substring(0, split), usage.substring(split),
				usage.replace("12.3", "99.0"), "data: [DONE]\n\n");
		ExchangeRecorder recorder = liveRecorder();
		ReportAtEachWrite writes = new ReportAtEachWrite(recorder);
		EmbeddedChannel client = new EmbeddedChannel(writes);
		List<ByteBuf> events = upstream.stream().map(ResponseRelayTests::buffer).toList();
		try {
			relay(client, recorder, events);
			EngineReport expected = new EngineReport(12.3, 85.2, 1240.5, 9.1, 1);
			assertThat(recorder.timer().engineReport()).isEqualTo(expected);
			assertThat(writes.reports).as("the report the recorder had as each buffer's write started")
				.containsExactly(null, null, null, expected, expected);
			assertThat(readAll(client)).as("forwarded unchanged and unmerged").isEqualTo(upstream);
		}
		finally {
			events.forEach(ReferenceCountUtil::safeRelease);
			client.finishAndReleaseAll();
		}
	}

	/**
	 * One engine read can hold far more than the window the relay copies bytes through
	 * for the scan (a burst after a stall): every event in it is found, those that
	 * straddle a window's edge included, and the client gets the buffer unchanged.
	 */
	@Test
	void findsEveryEventOfABufferLargerThanTheScansWindow() {
		StringBuilder burst = new StringBuilder();
		for (int i = 0; burst.length() < 3 * 4096; i++) {
			burst.append(text("token " + i + " ".repeat(i % 7)));
		}
		String body = burst.toString();
		int events = body.split("\n\n").length;
		ByteBuf direct = Unpooled.directBuffer(body.length()).writeBytes(body.getBytes(StandardCharsets.UTF_8));
		ExchangeRecorder recorder = liveRecorder();
		EmbeddedChannel client = new EmbeddedChannel();
		List<ByteBuf> upstream = List.of(direct, buffer("data: [DONE]\n\n"));
		try {
			relay(client, recorder, upstream);
			assertThat(recorder.timer().contentEvents()).isEqualTo(events);
			assertThat(readAll(client)).isEqualTo(List.of(body, "data: [DONE]\n\n"));
		}
		finally {
			upstream.forEach(ReferenceCountUtil::safeRelease);
			client.finishAndReleaseAll();
		}
	}

	@Test
	void reportsNothingForAStreamWhoseEngineSentNoMetrics() {
		List<String> upstream = List.of(text("one"),
				"data: {\"choices\":[],\"usage\":{\"completion_tokens\":2},\"metrics\":null}\n\n",
				"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\\\"metrics\\\":{\\\"queue_time_ms\\\":1}\"}}]}\n\n",
				"data: [DONE]\n\n");
		ExchangeRecorder recorder = liveRecorder();
		EmbeddedChannel client = new EmbeddedChannel();
		List<ByteBuf> events = upstream.stream().map(ResponseRelayTests::buffer).toList();
		try {
			relay(client, recorder, events);
			assertThat(recorder.timer().engineReport()).isNull();
			assertThat(readAll(client)).isEqualTo(upstream);
		}
		finally {
			events.forEach(ReferenceCountUtil::safeRelease);
			client.finishAndReleaseAll();
		}
	}

	private static final long IDLE = Duration.ofSeconds(5).toNanos();

	private static final long SEND = Duration.ofSeconds(20).toNanos();

	@Test
	void anEngineSilentForTheIdleTimeoutEndsTheStreamAsAnUpstreamTimeout() {
		try (TimedRelay relay = new TimedRelay(new EmbeddedChannel())) {
			relay.engine.tryEmitNext(event("one"));
			relay.advance(IDLE - 1_000_000);
			assertThat(relay.done).as("not yet idle").isFalse();
			relay.advance(2_000_000);
			assertThat(relay.done).isTrue();
			assertThat(relay.client.isOpen()).as("the incomplete body is ended by a close").isFalse();
			relay.recorder.close(System.nanoTime(), false);
			assertThat(scrape().value("tokengap_streams_total", "outcome", "upstream_timeout")).isEqualTo(1);
		}
	}

	@Test
	void everyBufferFromTheEngineRestartsTheIdleTimeout() {
		try (TimedRelay relay = new TimedRelay(new EmbeddedChannel())) {
			for (int i = 0; i < 5; i++) {
				relay.advance(IDLE * 6 / 10);
				relay.engine.tryEmitNext(event("t" + i));
			}
			assertThat(relay.done).as("three idle timeouts passed, never one silence as long").isFalse();
			relay.engine.tryEmitNext(buffer("data: [DONE]\n\n"));
			relay.engine.tryEmitComplete();
			assertThat(relay.done).isTrue();
			relay.recorder.close(System.nanoTime(), false);
			assertThat(scrape().value("tokengap_streams_total", "outcome", "completed")).isEqualTo(1);
		}
	}

	/**
	 * While the client's socket takes nothing, tokengap reads nothing from the engine:
	 * that silence is the client's, never an idle engine; once the write has made no
	 * progress for the send timeout, the client is closed and the stream is its cancel.
	 */
	@Test
	void aClientThatTakesNothingIsClosedAfterTheSendTimeoutAndItsSilenceIsNeverTheEngines() {
		HeldWrites held = new HeldWrites();
		try (TimedRelay relay = new TimedRelay(new EmbeddedChannel(held))) {
			relay.engine.tryEmitNext(event("one"));
			relay.advance(IDLE * 3);
			assertThat(relay.done).as("three idle timeouts while the client took nothing").isFalse();
			relay.advance(SEND - IDLE * 3);
			assertThat(relay.done).isTrue();
			assertThat(relay.sendTimedOut).isTrue();
			assertThat(relay.client.isOpen()).isFalse();
			relay.recorder.close(System.nanoTime(), false);
			assertThat(relay.recorder.timer().contentEvents()).as("the event never reached the client").isZero();
			assertThat(scrape().value("tokengap_streams_total", "outcome", "client_cancelled")).isEqualTo(1);
		}
		finally {
			held.release();
		}
	}

	/** A live stream's relay on an embedded client whose clock the test moves. */
	private final class TimedRelay implements AutoCloseable {

		final EmbeddedChannel client;

		final ExchangeRecorder recorder = liveRecorder();

		final Sinks.Many<ByteBuf> engine = Sinks.many().unicast().onBackpressureBuffer();

		final AtomicBoolean done = new AtomicBoolean();

		final AtomicBoolean sendTimedOut = new AtomicBoolean();

		TimedRelay(EmbeddedChannel client) {
			this.client = client;
			client.freezeTime();
			ResponseRelay.start(this.engine.asFlux(), client, new StreamTap(this.recorder, true), NanoClock.SYSTEM,
					new ResponseRelay.Timeouts(SEND, () -> this.sendTimedOut.set(true), IDLE),
					() -> this.done.set(true));
		}

		void advance(long nanos) {
			this.client.advanceTimeBy(nanos, TimeUnit.NANOSECONDS);
			this.client.runScheduledPendingTasks();
		}

		@Override
		public void close() {
			this.client.finishAndReleaseAll();
		}

	}

	private ExchangeRecorder liveRecorder() {
		ExchangeRecorder recorder = new ExchangeRecorder(this.meters, System.nanoTime());
		recorder.route("m", Endpoint.CHAT_COMPLETIONS);
		recorder.streamStarted();
		return recorder;
	}

	private static void relay(EmbeddedChannel client, ExchangeRecorder recorder, List<ByteBuf> events) {
		StepVerifier.create(relayed(Flux.fromIterable(events), client, recorder))
			.expectComplete()
			.verify(Duration.ofSeconds(5));
		assertThat(client.isOpen()).isTrue();
	}

	/** The relay of a live stream, as a Mono that completes when it said its ending. */
	private static Mono<Void> relayed(Flux<ByteBuf> body, EmbeddedChannel client, ExchangeRecorder recorder) {
		return relayed(body, client, new StreamTap(recorder, true));
	}

	/**
	 * The relay to a tap, with minute-long timeouts, as a Mono that completes when it
	 * said its ending.
	 */
	private static Mono<Void> relayed(Flux<ByteBuf> body, EmbeddedChannel client, ResponseTap tap) {
		long minute = Duration.ofSeconds(60).toNanos();
		return Mono.create((sink) -> {
			ResponseRelay relay = ResponseRelay.start(body, client, tap, NanoClock.SYSTEM,
					new ResponseRelay.Timeouts(minute, () -> {
					}, minute), sink::success);
			sink.onCancel(relay::clientGone);
		});
	}

	/** What the client received, one string per buffer written. */
	private static List<String> readAll(EmbeddedChannel client) {
		List<String> written = new ArrayList<>();
		for (ByteBuf buf = client.readOutbound(); buf != null; buf = client.readOutbound()) {
			written.add(buf.toString(StandardCharsets.UTF_8));
			buf.release();
		}
		return written;
	}

	private PrometheusText scrape() {
		return PrometheusText.scrape(this.registry);
	}

	private static ByteBuf event(String text) {
		return buffer(text(text));
	}

	private static String text(String text) {
		return "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + text + "\"}}]}\n\n";
	}

	private static ByteBuf buffer(String text) {
		return Unpooled.copiedBuffer(text, StandardCharsets.UTF_8);
	}

	/**
	 * Notes, as each buffer's write starts, the engine report the recorder has by then.
	 */
	private static final class ReportAtEachWrite extends ChannelOutboundHandlerAdapter {

		private final ExchangeRecorder recorder;

		private final List<EngineReport> reports = new ArrayList<>();

		ReportAtEachWrite(ExchangeRecorder recorder) {
			this.recorder = recorder;
		}

		@Override
		public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
			if (msg instanceof ByteBuf buf && buf.isReadable()) {
				this.reports.add(this.recorder.timer().engineReport());
			}
			ctx.write(msg, promise);
		}

	}

	/** Notes the text of every non-empty buffer written past it. */
	private static final class WriteLog extends ChannelOutboundHandlerAdapter {

		private final List<String> texts = new ArrayList<>();

		@Override
		public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
			if (msg instanceof ByteBuf buf && buf.isReadable()) {
				this.texts.add(buf.toString(StandardCharsets.UTF_8));
			}
			ctx.write(msg, promise);
		}

	}

	/** Holds every write: a client whose socket takes nothing. */
	private static final class HeldWrites extends ChannelOutboundHandlerAdapter {

		private final List<Object> messages = new ArrayList<>();

		@Override
		public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
			this.messages.add(msg);
		}

		void release() {
			this.messages.forEach(ReferenceCountUtil::safeRelease);
			this.messages.clear();
		}

	}

	/** Fails the n-th write as a broken encoder would: the channel stays open. */
	private static final class FailingWrite extends ChannelOutboundHandlerAdapter {

		private final int failing;

		private int writes;

		private Throwable failed;

		FailingWrite(int failing) {
			this.failing = failing;
		}

		@Override
		public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
			if (++this.writes == this.failing) {
				ReferenceCountUtil.release(msg);
				this.failed = new EncoderException("a broken encoder");
				promise.setFailure(this.failed);
				return;
			}
			ctx.write(msg, promise);
		}

	}

}
