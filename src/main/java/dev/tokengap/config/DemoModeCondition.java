package dev.tokengap.config;

import org.springframework.context.annotation.Condition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.util.StringUtils;

/**
 * Matches when no upstream URL is configured: tokengap then serves against its built-in simulator.
 */
class DemoModeCondition implements Condition {

	@Override
	public boolean matches(ConditionContext context, AnnotatedTypeMetadata metadata) {
		return !StringUtils.hasText(context.getEnvironment().getProperty("tokengap.upstream.url"));
	}

}
