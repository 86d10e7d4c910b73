package dev.tokengap.testsupport;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;

/**
 * Collects Netty's leak reports ({@code LEAK: ...} from {@code ResourceLeakDetector}),
 * which the tests run at {@code paranoid} level, so that {@link LeakCheckExtension} can
 * fail on them.
 */
public final class LeakReports extends AppenderBase<ILoggingEvent> {

	private static final List<String> REPORTS = new CopyOnWriteArrayList<>();

	@Override
	protected void append(ILoggingEvent event) {
		String message = event.getFormattedMessage();
		if (message != null && message.contains("LEAK:")) {
			REPORTS.add(message);
		}
	}

	static List<String> peek() {
		return List.copyOf(REPORTS);
	}

	static List<String> drain() {
		List<String> reports = List.copyOf(REPORTS);
		REPORTS.clear();
		return reports;
	}

}
