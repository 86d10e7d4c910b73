package dev.tokengap.testsupport;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufAllocatorMetric;
import io.netty.buffer.ByteBufAllocatorMetricProvider;

/**
 * The memory Netty's default allocator has handed out (direct and heap), which is where
 * any Reactor Netty code, tokengap's included, would keep a body it aggregated. The tests
 * run tokengap in their own JVM, so this is tokengap's, the scripted upstream's and the
 * client's.
 */
public final class BufferMemory implements AutoCloseable {

	private final long baseline = used();

	private final AtomicLong peak = new AtomicLong(this.baseline);

	private final Thread sampler;

	private volatile boolean running = true;

	private BufferMemory() {
		this.sampler = new Thread(this::track, "buffer-memory-sampler");
		this.sampler.setDaemon(true);
		this.sampler.start();
	}

	/** Starts sampling every millisecond, from now's use as the baseline. */
	public static BufferMemory sample() {
		return new BufferMemory();
	}

	/** The bytes in use now. */
	public static long used() {
		ByteBufAllocatorMetric metric = ((ByteBufAllocatorMetricProvider) ByteBufAllocator.DEFAULT).metric();
		return metric.usedDirectMemory() + metric.usedHeapMemory();
	}

	/** The highest use sampled so far, above the baseline. */
	public long peakGrowth() {
		return this.peak.get() - this.baseline;
	}

	private void track() {
		while (this.running) {
			this.peak.accumulateAndGet(used(), Math::max);
			LockSupport.parkNanos(1_000_000);
		}
	}

	@Override
	public void close() throws InterruptedException {
		this.running = false;
		this.sampler.join();
	}

}
