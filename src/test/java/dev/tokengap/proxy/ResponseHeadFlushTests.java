package dev.tokengap.proxy;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.DefaultEventLoop;
import io.netty.channel.local.LocalChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.ReferenceCountUtil;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link ResponseHeadFlush} on a real Netty event loop. Each test's writes run as one
 * task of the loop (one turn); a recorder between the handler and the channel's head
 * takes down which messages each flush that reached the socket would have carried.
 */
class ResponseHeadFlushTests {

	private final DefaultEventLoop loop = new DefaultEventLoop();

	private final FlushRecorder recorder = new FlushRecorder();

	private LocalChannel channel;

	@BeforeEach
	void register() throws InterruptedException {
		this.channel = new LocalChannel();
		this.loop.register(this.channel).sync();
		this.channel.pipeline().addLast(this.recorder, new ResponseHeadFlush());
	}

	@AfterEach
	void close() throws InterruptedException {
		this.channel.close().sync();
		this.loop.shutdownGracefully(0, 1, java.util.concurrent.TimeUnit.SECONDS).sync();
	}

	@Test
	void aHeadFlushedAloneGoesOutAtTheEndOfTheTurn() throws InterruptedException {
		HttpResponse head = head();
		List<List<Object>> inTurn = inOneTurn(() -> this.channel.writeAndFlush(head));
		assertThat(inTurn).isEmpty();
		assertThat(this.recorder.flushes).containsExactly(List.of(head));
	}

	@Test
	void aBodyWrittenInTheSameTurnLeavesWithTheHeadInOneFlush() throws InterruptedException {
		HttpResponse head = head();
		ByteBuf body = buffer("data: x\n\n");
		List<List<Object>> inTurn = inOneTurn(() -> {
			this.channel.writeAndFlush(head);
			this.channel.writeAndFlush(body);
		});
		assertThat(inTurn).containsExactly(List.of(head, body));
		// the task the held flush queued finds nothing left to send
		assertThat(this.recorder.flushes).containsExactly(List.of(head, body));
	}

	@Test
	void aHeldFlushAlsoCarriesWhatWasWrittenAfterTheHeadWithoutAFlush() throws InterruptedException {
		HttpResponse head = head();
		ByteBuf body = buffer("{}");
		List<List<Object>> inTurn = inOneTurn(() -> {
			this.channel.writeAndFlush(head);
			this.channel.write(body);
		});
		assertThat(inTurn).isEmpty();
		assertThat(this.recorder.flushes).containsExactly(List.of(head, body));
	}

	@Test
	void aWholeResponseIsFlushedAtOnce() throws InterruptedException {
		DefaultFullHttpResponse whole = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
				HttpResponseStatus.BAD_GATEWAY);
		List<List<Object>> inTurn = inOneTurn(() -> this.channel.writeAndFlush(whole));
		assertThat(inTurn).containsExactly(List.of(whole));
	}

	/** Runs the writes as one task; returns the flushes made before that task ended. */
	private List<List<Object>> inOneTurn(Runnable writes) throws InterruptedException {
		List<List<Object>> inTurn = new ArrayList<>();
		this.loop.submit(() -> {
			writes.run();
			inTurn.addAll(this.recorder.flushes);
		}).sync();
		// tasks run in order: once this one has, whatever the turn queued has too
		this.loop.submit(() -> {
		}).sync();
		return inTurn;
	}

	private static HttpResponse head() {
		return new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
	}

	private static ByteBuf buffer(String text) {
		return Unpooled.copiedBuffer(text, StandardCharsets.UTF_8);
	}

	/** Stands for the socket: takes down each flush's messages, then releases them. */
	static final class FlushRecorder extends ChannelOutboundHandlerAdapter {

		final List<List<Object>> flushes = new CopyOnWriteArrayList<>();

		private final List<Object> written = new ArrayList<>();

		@Override
		public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
			this.written.add(msg);
			promise.setSuccess();
		}

		@Override
		public void flush(ChannelHandlerContext ctx) {
			if (!this.written.isEmpty()) {
				this.flushes.add(List.copyOf(this.written));
				this.written.forEach(ReferenceCountUtil::release);
				this.written.clear();
			}
		}

	}

}
