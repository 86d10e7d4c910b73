package dev.tokengap.proxy;

import java.util.concurrent.TimeUnit;

import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The wait for a client's request headers, on Netty's embedded loop with a clock the test
 * moves: the wait starts when the connection opens and after each response, and ends with
 * the next request's headers.
 */
class RequestHeaderTimeoutHandlerTests {

	private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

	private EmbeddedChannel channel;

	@BeforeEach
	void connect() {
		this.channel = new EmbeddedChannel();
		this.channel.freezeTime();
		// added to an open connection: the wait starts now
		this.channel.pipeline().addLast(new RequestHeaderTimeoutHandler(10 * SECOND));
	}

	@Test
	void aConnectionWithoutARequestClosesAtTheTimeout() {
		advance(10 * SECOND - 1);
		assertThat(this.channel.isOpen()).isTrue();
		advance(1);
		assertThat(this.channel.isOpen()).isFalse();
	}

	@Test
	void aRequestsHeadersEndTheWaitUntilItsResponseEnds() {
		advance(5 * SECOND);
		request();
		advance(60 * SECOND);
		assertThat(this.channel.isOpen()).isTrue();
		respond();
		advance(10 * SECOND - 1);
		assertThat(this.channel.isOpen()).isTrue();
		advance(1);
		assertThat(this.channel.isOpen()).isFalse();
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
		advance(10 * SECOND - 1);
		assertThat(this.channel.isOpen()).isTrue();
		advance(1);
		assertThat(this.channel.isOpen()).isFalse();
	}

	@Test
	void aClosedConnectionLeavesNoCheckBehind() {
		this.channel.close();
		assertThat(this.channel.runScheduledPendingTasks()).isEqualTo(-1);
	}

	private void request() {
		this.channel.writeInbound(new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, "/v1/completions"));
		this.channel.readInbound();
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
