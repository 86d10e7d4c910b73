package dev.tokengap.config;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Turns a missing upstream URL into Spring Boot's short "APPLICATION FAILED TO START"
 * report instead of a stack trace.
 */
class UpstreamUrlMissingFailureAnalyzer extends AbstractFailureAnalyzer<UpstreamUrlMissingException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, UpstreamUrlMissingException cause) {
		return new FailureAnalysis("No engine configured: tokengap.upstream.url (TOKENGAP_UPSTREAM_URL) is not set "
				+ "and tokengap.mode is not demo.", UpstreamUrlMissingException.ACTION, cause);
	}

}
