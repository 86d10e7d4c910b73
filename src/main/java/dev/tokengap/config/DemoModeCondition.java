package dev.tokengap.config;

import org.springframework.context.annotation.Condition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.util.StringUtils;

/**
 * Matches {@code tokengap.mode=demo} without an upstream URL: tokengap then serves
 * against its built-in simulator. Only when asked for (a missing upstream URL is an
 * error, never an implicit demo), and never in front of a configured engine:
 * {@code TOKENGAP_UPSTREAM_URL=... ./mvnw
 * spring-boot:run} proxies to that engine although the build passes
 * {@code --tokengap.mode=demo}.
 */
class DemoModeCondition implements Condition {

	@Override
	public boolean matches(ConditionContext context, AnnotatedTypeMetadata metadata) {
		Environment environment = context.getEnvironment();
		return "demo".equalsIgnoreCase(environment.getProperty("tokengap.mode", "proxy").trim())
				&& !StringUtils.hasText(environment.getProperty("tokengap.upstream.url"));
	}

}
