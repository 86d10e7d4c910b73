package dev.tokengap.proxy;

import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import io.netty.channel.IoHandle;
import io.netty.channel.IoHandler;
import io.netty.channel.IoHandlerContext;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.IoOps;
import io.netty.channel.IoRegistration;
import io.netty.channel.epoll.EpollIoHandle;
import io.netty.channel.epoll.EpollIoOps;
import io.netty.util.concurrent.ThreadAwareExecutor;

/**
 * Netty's epoll I/O handler, except that a channel's change of interest (reading on or
 * off, waiting for writability) reaches the kernel once per turn of the event loop, just
 * before it waits again, and only when it differs from what the kernel already has.
 * <p>
 * Reactor Netty turns reading off and on again for every request its server reads
 * ({@code FluxReceive}'s constructor clears auto-read, the handler's first demand sets it
 * back), and Netty's epoll transport makes each of those an {@code epoll_ctl} call at
 * once: two system calls per request that cancel each other out before the loop waits
 * again (docs/performance.md, "How tokengap runs its transport"). The JDK's selector
 * applies interest changes this way too; epoll's level-triggered mode, the only one Netty
 * 4.2 uses for channels, reports a ready descriptor at every wait whatever happened to
 * its interest between two waits, so a change that is undone before the wait needs no
 * call at all.
 * <p>
 * Changes made on the event loop are kept until {@link #run} (the loop's next wait); one
 * made from another thread is handed to the loop. A registration cancelled, or whose
 * descriptor was closed, before the flush drops its change: the descriptor's number may
 * already name another channel. A change the kernel refuses closes the channel, as Netty
 * does when the call fails at once.
 */
final class DeferredInterestIoHandler implements IoHandler {

	private static final Log logger = LogFactory.getLog(DeferredInterestIoHandler.class);

	private final IoHandler epoll;

	private final ThreadAwareExecutor executor;

	/** Registrations with a change since the last flush, each once. */
	private final List<Registration> changed = new ArrayList<>();

	private DeferredInterestIoHandler(IoHandler epoll, ThreadAwareExecutor executor) {
		this.epoll = epoll;
		this.executor = executor;
	}

	/**
	 * A factory of handlers that defer the interest changes of the handlers it wraps.
	 * @param epoll the factory of Netty's epoll handlers
	 * @return the factory to build an event loop group with
	 */
	static IoHandlerFactory factory(IoHandlerFactory epoll) {
		return new IoHandlerFactory() {

			@Override
			public IoHandler newHandler(ThreadAwareExecutor executor) {
				return new DeferredInterestIoHandler(epoll.newHandler(executor), executor);
			}

			@Override
			public boolean isChangingThreadSupported() {
				return epoll.isChangingThreadSupported();
			}

		};
	}

	@Override
	public void initialize() {
		this.epoll.initialize();
	}

	@Override
	public int run(IoHandlerContext context) {
		flush();
		return this.epoll.run(context);
	}

	@Override
	public void prepareToDestroy() {
		this.changed.clear();
		this.epoll.prepareToDestroy();
	}

	@Override
	public void destroy() {
		this.epoll.destroy();
	}

	@Override
	public IoRegistration register(IoHandle handle) throws Exception {
		return new Registration(this.epoll.register(handle), handle);
	}

	@Override
	public void wakeup() {
		this.epoll.wakeup();
	}

	@Override
	public boolean isCompatible(Class<? extends IoHandle> handleType) {
		return this.epoll.isCompatible(handleType);
	}

	/** Applies the changes kept since the last wait. */
	private void flush() {
		List<Registration> registrations = this.changed;
		if (registrations.isEmpty()) {
			return;
		}
		for (int i = 0; i < registrations.size(); i++) {
			registrations.get(i).apply();
		}
		registrations.clear();
	}

	/** One channel's registration: Netty's, with its changes kept for the flush. */
	private final class Registration implements IoRegistration {

		private static final int NONE_APPLIED = -1;

		private final IoRegistration epoll;

		private final IoHandle handle;

		/** The interest the kernel has, or {@link #NONE_APPLIED} before the first. */
		private int applied = NONE_APPLIED;

		/** The interest to give the kernel at the flush, or null when it has it. */
		private IoOps pending;

		private boolean queued;

		Registration(IoRegistration epoll, IoHandle handle) {
			this.epoll = epoll;
			this.handle = handle;
		}

		@Override
		public <T> T attachment() {
			return this.epoll.attachment();
		}

		@Override
		public long submit(IoOps ops) {
			int value = ((EpollIoOps) ops).value();
			if (!DeferredInterestIoHandler.this.executor.isExecutorThread(Thread.currentThread())) {
				DeferredInterestIoHandler.this.executor.execute(() -> submit(ops));
				return value;
			}
			if (!this.epoll.isValid()) {
				return this.epoll.submit(ops);
			}
			this.pending = (value == this.applied) ? null : ops;
			if (!this.queued && this.pending != null) {
				this.queued = true;
				DeferredInterestIoHandler.this.changed.add(this);
			}
			return value;
		}

		void apply() {
			IoOps ops = this.pending;
			this.pending = null;
			this.queued = false;
			if (ops == null || !this.epoll.isValid() || !isOpen()) {
				return;
			}
			try {
				this.epoll.submit(ops);
				this.applied = ((EpollIoOps) ops).value();
			}
			catch (UncheckedIOException ex) {
				logger.debug("epoll_ctl failed; closing the channel", ex);
				close();
			}
		}

		private boolean isOpen() {
			return !(this.handle instanceof EpollIoHandle epollHandle) || epollHandle.fd().isOpen();
		}

		private void close() {
			try {
				this.handle.close();
			}
			catch (Exception ex) {
				logger.debug("Closing the channel failed", ex);
			}
		}

		@Override
		public boolean isValid() {
			return this.epoll.isValid();
		}

		@Override
		public boolean cancel() {
			// possibly from another thread: the flush finds the registration invalid
			return this.epoll.cancel();
		}

	}

}
