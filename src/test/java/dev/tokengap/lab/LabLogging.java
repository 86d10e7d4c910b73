package dev.tokengap.lab;

import org.slf4j.ILoggerFactory;
import org.slf4j.LoggerFactory;

/**
 * The lab's mains print their figures on stdout: Logback keeps warnings only, as
 * {@code tokengap bench} does.
 */
final class LabLogging {

	private LabLogging() {
	}

	static void quiet() {
		ILoggerFactory factory = LoggerFactory.getILoggerFactory();
		if (factory instanceof ch.qos.logback.classic.LoggerContext logback) {
			logback.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME).setLevel(ch.qos.logback.classic.Level.WARN);
		}
	}

}
