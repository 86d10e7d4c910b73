package dev.tokengap.attribution;

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
 * refuses the spike at once), drained in order by one daemon thread.
 *
 * <pre>
 *  event loops ── offer(spike, stream) ──▶ [ bounded queue ] ──▶ scan thread: scanner
 *               (refused when full)
 * </pre>
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

	private final Consumer<Handed> scanner;

	private final Thread thread;

	private volatile boolean closed;

	/**
	 * Starts the scan thread.
	 * @param capacity the spikes that may wait at most
	 * @param scanner told each spike, in order, on the scan thread
	 * @param threads makes the scan thread
	 */
	SpikeHandOff(int capacity, Consumer<Handed> scanner, ThreadFactory threads) {
		this.queue = new ArrayBlockingQueue<>(capacity);
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
		while (!this.closed) {
			Handed handed;
			try {
				handed = this.queue.take();
			}
			catch (InterruptedException ex) {
				return;
			}
			try {
				this.scanner.accept(handed);
			}
			catch (RuntimeException ex) {
				logger.warn("Looking at the other streams for a spike failed; streams are unaffected", ex);
			}
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
