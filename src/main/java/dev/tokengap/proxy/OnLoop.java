package dev.tokengap.proxy;

import java.util.concurrent.RejectedExecutionException;

import io.netty.channel.EventLoop;

/**
 * Runs an action on a connection's event loop: at once when called there, else as a task
 * on it. A loop that is shutting down takes no more tasks; the action then runs where it
 * was called, since nothing else runs on that loop any more.
 */
final class OnLoop {

	private OnLoop() {
	}

	static void run(EventLoop loop, Runnable action) {
		if (loop.inEventLoop()) {
			action.run();
			return;
		}
		try {
			loop.execute(action);
		}
		catch (RejectedExecutionException ex) {
			action.run();
		}
	}

}
