package dev.tokengap.proxy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The wait for a client's request, on Netty's embedded loop with a clock the test moves:
 * for its headers from the connection's open and from each response's end, for its body
 * from its headers; none while a whole request waits for its answer. A body that stops
 * short fails the read with {@link RequestBodyTimeoutException} and the connection closes
 * after the answer.
 */
class RequestTimeoutHandlerTests {

	private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

	private final List<Throwable> failures = new ArrayList<>();

	private EmbeddedChannel channel;

	@BeforeEach
	void connect() {
		this.channel = new EmbeddedChannel();
		this.channel.freezeTime();
		// added to an open connection: the wait starts now
		this.channel.pipeline().addLast(new RequestTimeoutHandler(Duration.ofSeconds(10)));
		this.channel.pipeline().addLast(new ChannelInboundHandlerAdapter() {
			@Override
			public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
				RequestTimeoutHandlerTests.this.failures.add(cause);
			}
		});
	}

	@Test
	void aConnectionWithoutARequestClosesAtTheTimeout() {
		assertOpenFor(10 * SECOND);
		assertThat(this.failures).isEmpty();
	}

	@Test
	void aWholeRequestIsNotTimedUntilItsResponseEnds() {
		advance(5 * SECOND);
		request();
		advance(60 * SECOND);
		assertThat(this.channel.isOpen()).isTrue();
		respond();
		assertOpenFor(10 * SECOND);
	}

	@Test
	void eachResponseStartsAFullWaitWhileAnEarlierCheckIsPending() {
		// requests 1 s apart: the check pending from the connection's open (due at 10 s)
		// must not close it at 10 s, 3 s after the last response
		for (int i = 0; i < 7; i++) {
			advance(SECOND / 2);
			request();
			advance(SECOND / 2);
			respond();
		}
		assertOpenFor(10 * SECOND);
	}

	@Test
	void aBodyHasTheTimeoutFromItsHeaders() {
		advance(9 * SECOND);
		headers();
		advance(5 * SECOND);
		content();
		advance(5 * SECOND - 1);
		assertThat(this.failures).isEmpty();
		content();
		this.channel.writeInbound(LastHttpContent.EMPTY_LAST_CONTENT);
		advance(60 * SECOND);
		assertThat(this.channel.isOpen()).as("whole: waiting for its answer").isTrue();
		assertThat(this.failures).isEmpty();
	}

	@Test
	void aBodyThatStopsShortFailsItsReadAndTheConnectionClosesAfterTheAnswer() {
		headers();
		content();
		advance(10 * SECOND - 1);
		assertThat(this.failures).isEmpty();
		advance(1);
		assertThat(this.failures).hasSize(1);
		assertThat(this.failures.get(0)).isInstanceOf(RequestBodyTimeoutException.class)
			.hasMessageContaining("tokengap.proxy.request-timeout");
		assertThat(this.channel.isOpen()).as("open for the answer").isTrue();
		respond();
		assertThat(this.channel.isOpen()).as("closed once the answer is written").isFalse();
	}

	@Test
	void aBodyThatStopsShortWithNoAnswerClosesOneTimeoutLater() {
		headers();
		advance(10 * SECOND);
		assertThat(this.failures).hasSize(1);
		assertOpenFor(10 * SECOND);
		assertThat(this.failures).as("failed once").hasSize(1);
	}

	@Test
	void anInterimAnswerIsNotTheRequestsAnswer() {
		// 100 Continue, while the client has yet to send its body
		headers();
		this.channel.writeOutbound(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.CONTINUE));
		this.channel.releaseOutbound();
		advance(10 * SECOND);
		assertThat(this.failures).as("the body's wait ran out: answered 408").hasSize(1);
		assertThat(this.channel.isOpen()).isTrue();
	}

	@Test
	void aRequestAnsweredBeforeItsBodyEndedIsClosedWithoutAFailure() {
		// say a 413 on its declared length, while the client keeps sending
		headers();
		advance(SECOND);
		respond();
		assertOpenFor(9 * SECOND);
		assertThat(this.failures).isEmpty();
	}

	@Test
	void aRequestAnsweredBeforeItsBodyEndedIsNotAwaitedOnceItsBodyEnds() {
		headers();
		advance(SECOND);
		respond();
		advance(SECOND);
		this.channel.writeInbound(LastHttpContent.EMPTY_LAST_CONTENT);
		// no answer is owed: the connection waits for its next request, and no longer
		assertOpenFor(10 * SECOND);
		assertThat(this.failures).isEmpty();
	}

	@Test
	void aPipelinedBodyBehindAnUnansweredRequestIsClosedWithoutAFailure() {
		request();
		headers();
		advance(10 * SECOND);
		assertThat(this.channel.isOpen()).isFalse();
		assertThat(this.failures).isEmpty();
	}

	@Test
	void aClosedConnectionLeavesNoCheckBehind() {
		this.channel.close();
		assertThat(this.channel.runScheduledPendingTasks()).isEqualTo(-1);
	}

	/** The connection stays open for {@code nanos} more, and closes at that instant. */
	private void assertOpenFor(long nanos) {
		advance(nanos - 1);
		assertThat(this.channel.isOpen()).isTrue();
		advance(1);
		assertThat(this.channel.isOpen()).isFalse();
	}

	private void request() {
		headers();
		this.channel.writeInbound(LastHttpContent.EMPTY_LAST_CONTENT);
	}

	private void headers() {
		this.channel.writeInbound(new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, "/v1/completions"));
		drainInbound();
	}

	private void content() {
		this.channel.writeInbound(new DefaultHttpContent(Unpooled.wrappedBuffer(new byte[] { '{' })));
		drainInbound();
	}

	private void drainInbound() {
		Object read;
		while ((read = this.channel.readInbound()) != null) {
			ReferenceCountUtil.release(read);
		}
	}

	private void respond() {
		this.channel.writeOutbound(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK));
		this.channel.releaseOutbound();
	}

	private void advance(long nanos) {
		this.channel.advanceTimeBy(nanos, TimeUnit.NANOSECONDS);
		this.channel.runScheduledPendingTasks();
	}

}
