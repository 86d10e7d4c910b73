package dev.tokengap.proxy;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import io.netty.util.concurrent.EventExecutor;

/**
 * A check on one event loop that runs no later than the earliest deadline it was given,
 * for a connection whose deadline moves with every request. Moving a deadline later
 * changes nothing: the pending check runs, finds the deadline not yet due, and its owner
 * asks again with {@link #checkBy}. Only a deadline earlier than the pending check
 * reschedules it. A connection serving request after request therefore schedules about
 * one check per timeout instead of a task and a cancel per request. Used on the loop
 * only.
 */
final class LoopDeadline {

	private final EventExecutor executor;

	private final Runnable check;

	private final Runnable fire = this::fire;

	private ScheduledFuture<?> timer;

	/** When the pending check runs, on the loop's clock. */
	private long timerAtNanos;

	/**
	 * @param executor the loop the check runs on, whose ticker is the clock
	 * @param check what to run; it calls {@link #checkBy} again if it must run later
	 */
	LoopDeadline(EventExecutor executor, Runnable check) {
		this.executor = executor;
		this.check = check;
	}

	/**
	 * @return the loop's clock, in nanoseconds
	 */
	long now() {
		return this.executor.ticker().nanoTime();
	}

	/**
	 * Makes sure the check runs no later than {@code deadlineNanos}.
	 * @param deadlineNanos the deadline, on {@link #now()}'s clock
	 */
	void checkBy(long deadlineNanos) {
		if (this.timer != null) {
			if (deadlineNanos - this.timerAtNanos >= 0) {
				// the pending check comes first and will look again
				return;
			}
			this.timer.cancel(false);
		}
		this.timerAtNanos = deadlineNanos;
		this.timer = this.executor.schedule(this.fire, Math.max(0, deadlineNanos - now()), TimeUnit.NANOSECONDS);
	}

	/** Drops the pending check, if any: for a connection that has ended. */
	void cancel() {
		if (this.timer != null) {
			this.timer.cancel(false);
			this.timer = null;
		}
	}

	private void fire() {
		this.timer = null;
		this.check.run();
	}

}
