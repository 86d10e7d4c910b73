package dev.tokengap.attribution;

import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class SpikeLogLimiterTests {

	private final AtomicLong now = new AtomicLong(5_000_000_000L);

	private final SpikeLogLimiter limiter = new SpikeLogLimiter(3, this.now::get);

	@Test
	void letsTheFirstLinesOfASecondThroughAndSkipsTheRest() {
		assertThat(this.limiter.tryAcquire()).isZero();
		assertThat(this.limiter.tryAcquire()).isZero();
		assertThat(this.limiter.tryAcquire()).isZero();
		assertThat(this.limiter.tryAcquire()).isEqualTo(-1);
		this.now.addAndGet(999_999_999L);
		assertThat(this.limiter.tryAcquire()).isEqualTo(-1);
	}

	@Test
	void reportsHowManyLinesWereSkippedInTheNextLineLetThrough() {
		for (int i = 0; i < 3 + 1_000; i++) {
			this.limiter.tryAcquire();
		}
		this.now.addAndGet(1_000_000_000L);
		assertThat(this.limiter.tryAcquire()).isEqualTo(1_000);
		assertThat(this.limiter.tryAcquire()).isZero();
	}

	@Test
	void logsNothingAtZeroLinesPerSecond() {
		SpikeLogLimiter silent = new SpikeLogLimiter(0, this.now::get);
		assertThat(silent.tryAcquire()).isEqualTo(-1);
		this.now.addAndGet(10_000_000_000L);
		assertThat(silent.tryAcquire()).isEqualTo(-1);
	}

}
