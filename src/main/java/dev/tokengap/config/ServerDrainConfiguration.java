package dev.tokengap.config;

import java.time.Duration;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.autoconfigure.context.LifecycleProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Each of the application's ports drains with a {@link ServerDrain} of its own: the proxy
 * port's in the application's context, the management port's in the child context Spring
 * Boot runs it in, which imports this configuration through
 * {@code META-INF/spring/org.springframework.boot.actuate.autoconfigure.web.ManagementContextConfiguration.imports}.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
class ServerDrainConfiguration {

	/** Spring Boot's default for {@code spring.lifecycle.timeout-per-shutdown-phase}. */
	private static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(30);

	@Bean
	ServerDrain serverDrain(ObjectProvider<LifecycleProperties> lifecycle) {
		LifecycleProperties properties = lifecycle.getIfAvailable();
		return new ServerDrain((properties != null) ? properties.getTimeoutPerShutdownPhase() : DEFAULT_TIMEOUT);
	}

}
