package dev.tokengap.testsupport;

import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Base of the tests that run tokengap in front of a scripted upstream: one upstream
 * server for the whole test JVM, each test scripting the answers it needs. The engine
 * paths tokengap reads by itself ({@code /metrics}, {@code /v1/models}: cached contexts
 * keep scraping) are answered 404, outside the script.
 */
public abstract class ScriptedUpstreamTests {

	protected static final ScriptedUpstream upstream = ScriptedUpstream.start()
		.ignoring("/metrics", "/v1/models", "/health");

	@LocalServerPort
	protected int port;

	@LocalManagementPort
	protected int managementPort;

	@DynamicPropertySource
	static void upstreamUrl(DynamicPropertyRegistry registry) {
		registry.add("tokengap.upstream.url", upstream::url);
	}

}
