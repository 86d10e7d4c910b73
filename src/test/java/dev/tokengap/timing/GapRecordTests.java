package dev.tokengap.timing;

import java.lang.management.ManagementFactory;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.withinPercentage;

class GapRecordTests {

	private static final double[] PERCENTILES = { 0.001, 0.01, 0.07, 0.1, 0.25, 0.29, 0.5, 0.57, 0.75, 0.9, 0.99, 0.999,
			1 };

	private final GapRecord record = new GapRecord();

	@Test
	void isEmptyUntilTheFirstGap() {
		assertThat(this.record.count()).isZero();
		assertThat(this.record.maxNanos()).isZero();
		assertThat(this.record.percentileNanos(0.5)).isZero();
		assertThat(this.record.percentileNanos(1)).isZero();
	}

	@Test
	void keepsGapsBelow64MicrosecondsExactToTheMicrosecond() {
		for (int micros = 63; micros >= 0; micros--) {
			this.record.add(micros * 1000L);
		}
		for (int micros = 0; micros < 64; micros++) {
			assertThat(this.record.percentileNanos((micros + 1) / 64.0)).isEqualTo(micros * 1000L);
		}
	}

	@Test
	void roundsGapsToTheNearestMicrosecond() {
		this.record.add(1_499);
		this.record.add(1_500);
		this.record.add(10_000);
		assertThat(this.record.percentileNanos(1 / 3.0)).isEqualTo(1_000);
		assertThat(this.record.percentileNanos(2 / 3.0)).isEqualTo(2_000);
	}

	@ParameterizedTest
	@ValueSource(ints = { 1, 2, 7, 10, 100, 1_000, 30_000 })
	void staysWithinTwoPercentOfTheExactNearestRank(int count) {
		Random random = new Random(count);
		long[] gaps = new long[count];
		for (int i = 0; i < count; i++) {
			gaps[i] = (i % 3 == 0) ? millis(20 + random.nextInt(20)) : logUniform(random, 32_000, seconds(600));
			this.record.add(gaps[i]);
		}
		Arrays.sort(gaps);
		for (double p : PERCENTILES) {
			assertThat(this.record.percentileNanos(p)).as("p%s of %d gaps", p, count)
				.isCloseTo(nearestRank(gaps, p), withinPercentage(2));
		}
	}

	@ParameterizedTest
	@ValueSource(ints = { 1, 2, 7, 100, 1_000, 30_000 })
	void boundsEveryPercentileFromBelowByItsLowestGap(int count) {
		Random random = new Random(count);
		for (int i = 0; i < count; i++) {
			this.record.add((i % 2 == 0) ? millis(180 + random.nextInt(40)) : logUniform(random, 32_000, seconds(600)));
		}
		long bound = this.record.lowerBoundNanos();
		for (double p : PERCENTILES) {
			assertThat(this.record.percentileNanos(p)).as("p%s of %d gaps", p, count).isGreaterThanOrEqualTo(bound);
		}
		assertThat(bound).as("the first rank's percentile").isEqualTo(this.record.percentileNanos(1.0 / count));
	}

	@Test
	void boundsNothingWhenEmptyAndStartsOverAfterReset() {
		assertThat(this.record.lowerBoundNanos()).isZero();
		this.record.add(millis(5));
		this.record.add(seconds(3));
		this.record.reset();
		assertThat(this.record.lowerBoundNanos()).isZero();
		this.record.add(seconds(2));
		this.record.add(millis(40));
		assertThat(this.record.lowerBoundNanos()).isEqualTo(this.record.percentileNanos(0.5))
			.isCloseTo(millis(40), withinPercentage(2));
	}

	@Test
	void picksTheRankAsDecimalArithmeticWould() {
		for (int millis = 100; millis >= 1; millis--) {
			this.record.add(millis(millis));
		}
		assertThat(this.record.percentileNanos(0.07)).isCloseTo(millis(7), withinPercentage(1.6));
		assertThat(this.record.percentileNanos(0.29)).isCloseTo(millis(29), withinPercentage(1.6));
		assertThat(this.record.percentileNanos(0.57)).isCloseTo(millis(57), withinPercentage(1.6));
		assertThat(this.record.percentileNanos(0.571)).isCloseTo(millis(58), withinPercentage(1.6));
	}

	@Test
	void givesAJitterRatioOfExactlyOneForIdenticalGaps() {
		for (int i = 0; i < 30_000; i++) {
			this.record.add(23_456_789);
		}
		double ratio = (double) this.record.percentileNanos(0.99) / this.record.percentileNanos(0.5);
		assertThat(ratio).isEqualTo(1.0);
		assertThat(this.record.percentileNanos(0.5)).isCloseTo(23_456_789L, withinPercentage(1.6));
	}

	@Test
	void keepsTheWorstGapExactly() {
		Random random = new Random(7);
		long max = 0;
		for (int i = 0; i < 10_000; i++) {
			long gap = logUniform(random, 1, seconds(60));
			max = Math.max(max, gap);
			this.record.add(gap);
		}
		assertThat(this.record.maxNanos()).isEqualTo(max);
		assertThat(this.record.percentileNanos(1)).isEqualTo(max);
		assertThat(this.record.count()).isEqualTo(10_000);
	}

	@Test
	void neverReportsAPercentileAboveTheWorstGap() {
		// the bucket holding 98.4 ms spans 98.304 ms to 100.352 ms, so its middle is
		// above this gap
		this.record.add(98_400_123);
		this.record.add(98_400_123);
		assertThat(this.record.percentileNanos(0.5)).isEqualTo(98_400_123);
	}

	@Test
	void countsANegativeGapAsZero() {
		this.record.add(-5);
		assertThat(this.record.count()).isEqualTo(1);
		assertThat(this.record.maxNanos()).isZero();
		assertThat(this.record.percentileNanos(0.5)).isZero();
	}

	@Test
	void clampsGapsBeyondTheLastBucketButKeepsTheirMaximum() {
		long limit = TimeUnit.MICROSECONDS.toNanos(1L << 33);
		this.record.add(limit - 1_000);
		this.record.add(TimeUnit.HOURS.toNanos(10));
		this.record.add(Long.MAX_VALUE);
		long lastBucket = this.record.percentileNanos(1 / 3.0);
		assertThat(lastBucket).isCloseTo(limit - 1_000, withinPercentage(1.6)).isLessThan(limit);
		assertThat(this.record.percentileNanos(2 / 3.0)).isEqualTo(lastBucket);
		assertThat(this.record.maxNanos()).isEqualTo(Long.MAX_VALUE);
		assertThat(this.record.percentileNanos(1)).isEqualTo(Long.MAX_VALUE);
	}

	@Test
	void startsOverAfterReset() {
		this.record.add(seconds(3));
		this.record.add(millis(5));
		this.record.reset();
		assertThat(this.record.count()).isZero();
		assertThat(this.record.maxNanos()).isZero();
		assertThat(this.record.percentileNanos(0.5)).isZero();
		this.record.add(millis(40));
		assertThat(this.record.percentileNanos(0.01)).isEqualTo(this.record.percentileNanos(1)).isEqualTo(millis(40));
	}

	@ParameterizedTest
	@ValueSource(doubles = { 0, -0.5, 1.0000001, Double.NaN, Double.POSITIVE_INFINITY })
	void rejectsAFractionOutsideZeroToOne(double p) {
		this.record.add(1);
		assertThatIllegalArgumentException().isThrownBy(() -> this.record.percentileNanos(p));
	}

	@Test
	void recordsWithoutAllocatingAfterTheFirstGap() {
		this.record.add(1);
		for (int i = 0; i < 100_000; i++) {
			this.record.add(i * 997L);
		}
		long before = allocatedBytes();
		for (int i = 0; i < 1_000_000; i++) {
			this.record.add(i * 7_919L);
		}
		assertThat(allocatedBytes() - before).isLessThan(16 * 1024);
	}

	@Test
	void keepsAHundredTokenStreamOfJitteryGapsInUnderAKilobyte() {
		hundredTokenStream(new Random(99));
		long reading = allocatedBytes();
		reading = allocatedBytes() - reading; // what reading the counter allocates itself
		long before = allocatedBytes();
		GapRecord stream = hundredTokenStream(new Random(100));
		assertThat(allocatedBytes() - before - reading).isLessThan(1024);
		assertThat(stream.count()).isEqualTo(100);
	}

	private static GapRecord hundredTokenStream(Random random) {
		GapRecord stream = new GapRecord();
		for (int i = 0; i < 100; i++) {
			stream.add(TimeUnit.MICROSECONDS.toNanos(17_000 + random.nextInt(6_000)));
		}
		return stream;
	}

	@Test
	void keepsExactRanksWhenTheGapsSpreadOverMoreBucketsThanTheSparseCountsHold() {
		long[] gaps = new long[2 * GapRecord.SPARSE_LIMIT + 1];
		for (int i = 0; i < GapRecord.SPARSE_LIMIT; i++) {
			// descending, so that every new bucket goes in front of those already there
			gaps[2 * i] = TimeUnit.MICROSECONDS.toNanos(GapRecord.SPARSE_LIMIT - i);
			gaps[2 * i + 1] = gaps[2 * i];
			this.record.add(gaps[2 * i]);
			this.record.add(gaps[2 * i + 1]);
		}
		long[] sparse = Arrays.copyOf(gaps, 2 * GapRecord.SPARSE_LIMIT);
		Arrays.sort(sparse);
		for (double p : PERCENTILES) {
			assertThat(this.record.percentileNanos(p)).as("p%s while sparse", p).isEqualTo(nearestRank(sparse, p));
		}
		gaps[gaps.length - 1] = 0;
		this.record.add(0);
		Arrays.sort(gaps);
		for (double p : PERCENTILES) {
			assertThat(this.record.percentileNanos(p)).as("p%s once dense", p).isEqualTo(nearestRank(gaps, p));
		}
		this.record.reset();
		this.record.add(TimeUnit.MICROSECONDS.toNanos(7));
		assertThat(this.record.percentileNanos(0.5)).isEqualTo(TimeUnit.MICROSECONDS.toNanos(7));
	}

	private static long nearestRank(long[] sorted, double p) {
		BigDecimal rank = new BigDecimal(Double.toString(p)).multiply(BigDecimal.valueOf(sorted.length))
			.setScale(0, RoundingMode.CEILING);
		return sorted[rank.intValueExact() - 1];
	}

	private static long logUniform(Random random, long from, long to) {
		double log = Math.log(from) + random.nextDouble() * (Math.log(to) - Math.log(from));
		return (long) Math.exp(log);
	}

	private static long millis(long millis) {
		return TimeUnit.MILLISECONDS.toNanos(millis);
	}

	private static long seconds(long seconds) {
		return TimeUnit.SECONDS.toNanos(seconds);
	}

	private static long allocatedBytes() {
		return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean()).getCurrentThreadAllocatedBytes();
	}

}
