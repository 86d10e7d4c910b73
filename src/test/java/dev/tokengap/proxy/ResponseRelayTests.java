package dev.tokengap.proxy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.EncoderException;
import io.netty.util.ReferenceCountUtil;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

import dev.tokengap.metrics.BucketEdges;
import dev.tokengap.metrics.Endpoint;
import dev.tokengap.metrics.ExchangeRecorder;
import dev.tokengap.metrics.TokengapMeters;
import dev.tokengap.testsupport.PrometheusText;
import dev.tokengap.timing.NanoClock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The relay on an embedded client channel whose pipeline can fail a write the way no socket
 * does: a failure that is not I/O must end the stream, not let the relay time events that never
 * reached the client.
 */
class ResponseRelayTests {

	private final PrometheusRegistry registry = new PrometheusRegistry();

	private final TokengapMeters meters = new TokengapMeters(this.registry, BucketEdges.VLLM_V1, 400_000_000L,
			NanoClock.SYSTEM);

	@Test
	void aWriteThatFailsWithoutClosingTheConnectionEndsTheStreamUntimed() {
		EmbeddedChannel client = new EmbeddedChannel(new FailingWrite(2));
		ExchangeRecorder recorder = new ExchangeRecorder(this.meters, System.nanoTime());
		recorder.route("m", Endpoint.CHAT_COMPLETIONS);
		recorder.streamStarted();
		List<ByteBuf> events = List.of(event("one"), event("two"), event("three"));
		try {
			StepVerifier
				.create(ResponseRelay.relay(Flux.fromIterable(events), client, recorder, true, NanoClock.SYSTEM,
						Duration.ofSeconds(60).toNanos(), () -> {
						}))
				.expectComplete()
				.verify(Duration.ofSeconds(5));
			assertThat(recorder.timer().contentEvents()).as("only the event that reached the client").isEqualTo(1);
			assertThat(client.isOpen()).as("the broken connection is closed").isFalse();
			recorder.close(System.nanoTime(), false);
			assertThat(scrape().value("tokengap_streams_total", "outcome", "upstream_error")).isEqualTo(1);
			assertThat(scrape().value("tokengap_streams_total")).as("exactly one outcome").isEqualTo(1);
			assertThatThrownBy(client::checkException).isInstanceOf(EncoderException.class);
			ByteBuf written = client.readOutbound();
			assertThat(written.toString(StandardCharsets.UTF_8)).contains("one");
			written.release();
		}
		finally {
			events.forEach(ReferenceCountUtil::safeRelease);
			client.finishAndReleaseAll();
		}
	}

	@Test
	void aStreamWhoseWritesAllSucceedIsTimedWhole() {
		EmbeddedChannel client = new EmbeddedChannel();
		ExchangeRecorder recorder = new ExchangeRecorder(this.meters, System.nanoTime());
		recorder.route("m", Endpoint.CHAT_COMPLETIONS);
		recorder.streamStarted();
		List<ByteBuf> events = List.of(event("one"), event("two"), Unpooled.copiedBuffer("data: [DONE]\n\n",
				StandardCharsets.UTF_8));
		try {
			StepVerifier
				.create(ResponseRelay.relay(Flux.fromIterable(events), client, recorder, true, NanoClock.SYSTEM,
						Duration.ofSeconds(60).toNanos(), () -> {
						}))
				.expectComplete()
				.verify(Duration.ofSeconds(5));
			assertThat(recorder.timer().contentEvents()).isEqualTo(2);
			assertThat(client.isOpen()).isTrue();
		}
		finally {
			events.forEach(ReferenceCountUtil::safeRelease);
			client.finishAndReleaseAll();
		}
	}

	private PrometheusText scrape() {
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		try {
			PrometheusTextFormatWriter.create().write(out, this.registry.scrape());
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		return new PrometheusText(out.toString(StandardCharsets.UTF_8));
	}

	private static ByteBuf event(String text) {
		return Unpooled.copiedBuffer("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + text + "\"}}]}\n\n",
				StandardCharsets.UTF_8);
	}

	/** Fails the n-th write as a broken encoder would: the channel stays open. */
	private static final class FailingWrite extends ChannelOutboundHandlerAdapter {

		private final int failing;

		private int writes;

		FailingWrite(int failing) {
			this.failing = failing;
		}

		@Override
		public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
			if (++this.writes == this.failing) {
				ReferenceCountUtil.release(msg);
				promise.setFailure(new EncoderException("a broken encoder"));
				return;
			}
			ctx.write(msg, promise);
		}

	}

}
