package dev.tokengap.timing;

import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class LogRateLimiterTests {

	private final AtomicLong now = new AtomicLong(7_000_000_000L);

	private final LogRateLimiter limiter = new LogRateLimiter(2, this.now::get);

	@Test
	void letsTheFirstLinesOfASecondThroughAndSaysHowManyWereSkippedInTheNext() {
		assertThat(this.limiter.tryAcquire()).isZero();
		assertThat(this.limiter.tryAcquire()).isZero();
		for (int i = 0; i < 500; i++) {
			assertThat(this.limiter.tryAcquire()).isEqualTo(-1);
		}
		this.now.addAndGet(999_999_999L);
		assertThat(this.limiter.tryAcquire()).isEqualTo(-1);
		this.now.addAndGet(1L);
		assertThat(this.limiter.tryAcquire()).isEqualTo(501);
		assertThat(this.limiter.tryAcquire()).isZero();
		assertThat(this.limiter.tryAcquire()).isEqualTo(-1);
	}

	@Test
	void logsNothingAtZeroLinesPerSecond() {
		LogRateLimiter silent = new LogRateLimiter(0, this.now::get);
		assertThat(silent.tryAcquire()).isEqualTo(-1);
		this.now.addAndGet(10_000_000_000L);
		assertThat(silent.tryAcquire()).isEqualTo(-1);
	}

}
