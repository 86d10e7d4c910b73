package dev.tokengap.testsupport;

import java.time.Duration;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The leak check itself: a buffer dropped without release is reported, so a leaking test
 * class would fail.
 */
class LeakCheckExtensionTests {

	@Test
	void reportsABufferThatWasNeverReleased() {
		leakOne();
		await().atMost(Duration.ofSeconds(20)).until(() -> {
			System.gc();
			PooledByteBufAllocator.DEFAULT.buffer(1).release();
			return !LeakReports.peek().isEmpty();
		});
		assertThat(LeakReports.drain()).anySatisfy((report) -> assertThat(report).contains("LEAK:"));
	}

	private static void leakOne() {
		ByteBuf leaked = PooledByteBufAllocator.DEFAULT.buffer(16);
		leaked.writeInt(42);
	}

}
