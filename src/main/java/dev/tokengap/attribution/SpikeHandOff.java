package dev.tokengap.attribution;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import dev.tokengap.timing.StreamTimer;

/**
 * The event loops' hand-off of spikes to the one thread that looks at the other streams
 * for them: a bounded queue the loops offer to, which never blocks them (a full queue
 * refuses the spike at once), drained in order by one daemon thread, in batches.
 *
 * <pre>
 *  event loops ── offer(spike, stream) ──▶ [ bounded queue ] ──▶ scan thread: scanner(batch)
 *               (refused when full)
 * </pre>
 *
 * Having taken a spike, the scan thread waits a short batch window and takes every spike
 * that came meanwhile with it, so that the scanner reads the other streams once for all
 * of them. Spikes come in bursts (a stall of the engine is a spike on every stream it
 * serves), and a scan costs one read of every live stream: without batches, a thousand
 * streams' spikes would cost a million reads.
 */
final class SpikeHandOff implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(SpikeHandOff.class);

	/**
	 * One spike as the loop saw it, and the stream it is of: all the scan needs.
	 *
	 * @param spike the spike, immutable
	 * @param self its stream (read through its published arrivals only)
	 */
	record Handed(Spike spike, StreamTimer self) {

	}

	private final BlockingQueue<Handed> queue;

	/** The most spikes one batch holds. */
	static final int MAX_BATCH = 256;

	private final Consumer<List<Handed>> scanner;

	private final long batchWindowNanos;

	private final Thread thread;

	private volatile boolean closed;

	/**
	 * Starts the scan thread.
	 * @param capacity the spikes that may wait at most
	 * @param batchWindow how long the scan thread waits, after taking a spike, for others
	 * to scan with it
	 * @param scanner told each batch of spikes, in order, on the scan thread
	 * @param threads makes the scan thread
	 */
	SpikeHandOff(int capacity, Duration batchWindow, Consumer<List<Handed>> scanner, ThreadFactory threads) {
		this.queue = new ArrayBlockingQueue<>(capacity);
		this.batchWindowNanos = batchWindow.toNanos();
		this.scanner = scanner;
		this.thread = threads.newThread(this::drain);
		this.thread.setDaemon(true);
		this.thread.start();
	}

	/**
	 * Hands a spike over, without waiting: any thread.
	 * @param spike the spike
	 * @param self its stream
	 * @return false when the queue was full or the hand-off closed: the spike was not
	 * taken
	 */
	boolean offer(Spike spike, StreamTimer self) {
		return !this.closed && this.queue.offer(new Handed(spike, self));
	}

	/**
	 * @return whether it was closed (the application is stopping)
	 */
	boolean isClosed() {
		return this.closed;
	}

	/**
	 * @return spikes waiting for the scan thread
	 */
	int waiting() {
		return this.queue.size();
	}

	private void drain() {
		List<Handed> batch = new ArrayList<>();
		while (!this.closed) {
			try {
				batch.add(this.queue.take());
				if (this.batchWindowNanos > 0) {
					TimeUnit.NANOSECONDS.sleep(this.batchWindowNanos);
				}
			}
			catch (InterruptedException ex) {
				return;
			}
			this.queue.drainTo(batch, MAX_BATCH - 1);
			try {
				this.scanner.accept(batch);
			}
			catch (RuntimeException ex) {
				logger.warn("Looking at the other streams for spikes failed; streams are unaffected", ex);
			}
			batch.clear();
		}
	}

	/** Stops the scan thread: spikes still waiting are not scanned. */
	@Override
	public void close() {
		this.closed = true;
		this.thread.interrupt();
		try {
			this.thread.join(TimeUnit.SECONDS.toMillis(5));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
