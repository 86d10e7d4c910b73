package dev.tokengap.testsupport;

import java.util.List;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails a test class when Netty reported a leaked buffer while it ran. Registered for
 * every test class (JUnit extension auto-detection); Netty runs at {@code paranoid} leak
 * detection in tests.
 */
public final class LeakCheckExtension implements AfterAllCallback {

	@Override
	public void afterAll(ExtensionContext context) {
		// Leaks are reported when a collected,
		// unreleased buffer is noticed at a later allocation.
		for (int i = 0; i < 3; i++) {
			System.gc();
			ByteBuf probe = PooledByteBufAllocator.DEFAULT.buffer(1);
			probe.release();
			probe = UnpooledByteBufAllocator.DEFAULT.buffer(1);
			probe.release();
		}
		List<String> reports = LeakReports.drain();
		if (!reports.isEmpty()) {
			throw new AssertionError("Netty reported " + reports.size() + " leaked buffer(s) during "
					+ context.getDisplayName() + ":\n" + String.join("\n", reports));
		}
	}

}
