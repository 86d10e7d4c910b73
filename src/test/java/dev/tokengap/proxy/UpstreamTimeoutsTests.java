package dev.tokengap.proxy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.timeout.ReadTimeoutException;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The engine connection's two deadlines on Netty's embedded loop, whose clock only moves
 * when the test moves it: each deadline fires when it is due and not before, also when a
 * check scheduled for an earlier request is still pending.
 */
class UpstreamTimeoutsTests {

	private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

	private final List<Throwable> failures = new ArrayList<>();

	private EmbeddedChannel channel;

	private UpstreamTimeouts timeouts;

	@BeforeEach
	void connect() {
		this.channel = new EmbeddedChannel();
		this.channel.freezeTime();
		this.channel.pipeline().addLast(new ChannelInboundHandlerAdapter() {
			@Override
			public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
				UpstreamTimeoutsTests.this.failures.add(cause);
			}
		});
		this.timeouts = UpstreamTimeouts.install(this.channel);
	}

	@Test
	void responseHeadersAreDueWithinTheResponseTimeout() {
		this.timeouts.awaitHeaders(10 * SECOND);
		advance(10 * SECOND - 1);
		assertThat(this.channel.isOpen()).isTrue();
		advance(1);
		assertThat(this.channel.isOpen()).isFalse();
		assertThat(this.failures).singleElement().isInstanceOf(UpstreamTimeouts.HeadersTimeoutException.class);
	}

	@Test
	void aLaterRequestsDeadlineHoldsWhileAnEarlierCheckIsPending() {
		long first = this.timeouts.awaitHeaders(10 * SECOND);
		advance(SECOND);
		this.timeouts.headersIn(first, 5 * SECOND);
		this.timeouts.done(first);
		advance(SECOND);
		// the next request, at 2 s: the check pending for 6 s must not end it at 6 s
		this.timeouts.awaitHeaders(10 * SECOND);
		advance(9 * SECOND);
		assertThat(this.channel.isOpen()).isTrue();
		advance(SECOND);
		assertThat(this.channel.isOpen()).isFalse();
		assertThat(this.failures).singleElement().isInstanceOf(UpstreamTimeouts.HeadersTimeoutException.class);
	}

	@Test
	void anIdleTimeoutShorterThanThePendingCheckStillFiresOnTime() {
		long ticket = this.timeouts.awaitHeaders(600 * SECOND);
		advance(SECOND);
		this.timeouts.headersIn(ticket, 5 * SECOND);
		advance(5 * SECOND - 1);
		assertThat(this.channel.isOpen()).isTrue();
		advance(1);
		assertThat(this.channel.isOpen()).isFalse();
		assertThat(this.failures).singleElement().isSameAs(ReadTimeoutException.INSTANCE);
	}

	@Test
	void everyReadRestartsTheIdleTimeout() {
		long ticket = this.timeouts.awaitHeaders(10 * SECOND);
		this.timeouts.headersIn(ticket, 5 * SECOND);
		for (int i = 0; i < 5; i++) {
			advance(3 * SECOND);
			this.channel.writeInbound("event");
			assertThat(this.channel.isOpen()).isTrue();
		}
		advance(5 * SECOND);
		assertThat(this.channel.isOpen()).isFalse();
		assertThat(this.failures).singleElement().isSameAs(ReadTimeoutException.INSTANCE);
	}

	@Test
	void silenceWhileTokengapHoldsReadsForASlowClientIsNotIdleness() {
		long ticket = this.timeouts.awaitHeaders(10 * SECOND);
		this.timeouts.headersIn(ticket, 5 * SECOND);
		this.channel.config().setAutoRead(false);
		advance(20 * SECOND);
		assertThat(this.channel.isOpen()).isTrue();
		this.channel.config().setAutoRead(true);
		advance(5 * SECOND);
		assertThat(this.channel.isOpen()).isFalse();
		assertThat(this.failures).singleElement().isSameAs(ReadTimeoutException.INSTANCE);
	}

	@Test
	void anEndedExchangeLeavesNoDeadline() {
		long ticket = this.timeouts.awaitHeaders(10 * SECOND);
		this.timeouts.headersIn(ticket, 5 * SECOND);
		this.timeouts.done(ticket);
		advance(60 * SECOND);
		assertThat(this.channel.isOpen()).isTrue();
		assertThat(this.failures).isEmpty();
	}

	@Test
	void anEarlierRequestsEndDoesNotDisarmTheNextOne() {
		long first = this.timeouts.awaitHeaders(10 * SECOND);
		this.timeouts.headersIn(first, 5 * SECOND);
		this.timeouts.awaitHeaders(10 * SECOND);
		this.timeouts.done(first);
		advance(10 * SECOND);
		assertThat(this.channel.isOpen()).isFalse();
		assertThat(this.failures).singleElement().isInstanceOf(UpstreamTimeouts.HeadersTimeoutException.class);
	}

	@Test
	void requestAfterRequestMovesTheDeadlineNotTheCheck() {
		for (int i = 0; i < 100; i++) {
			long ticket = this.timeouts.awaitHeaders(600 * SECOND);
			advance(SECOND / 100);
			this.timeouts.headersIn(ticket, 300 * SECOND);
			this.timeouts.done(ticket);
		}
		// 1 s in: the check pending is still the first request's, for 300.01 s, not one
		// scheduled again for each of the 99 after it
		assertThat(this.channel.runScheduledPendingTasks()).isEqualTo(300 * SECOND + SECOND / 100 - SECOND);
		advance(600 * SECOND);
		assertThat(this.channel.isOpen()).isTrue();
		assertThat(this.failures).isEmpty();
		// the check found nothing to wait for and is gone
		assertThat(this.channel.runScheduledPendingTasks()).isEqualTo(-1);
	}

	private void advance(long nanos) {
		this.channel.advanceTimeBy(nanos, TimeUnit.NANOSECONDS);
		this.channel.runScheduledPendingTasks();
	}

}
