package dev.tokengap.config;

import org.springframework.context.annotation.Condition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Matches the modes that run the proxy: {@code tokengap.mode=proxy} (the default) and
 * {@code demo}; not {@code simulator}.
 */
class ProxyModeCondition implements Condition {

	@Override
	public boolean matches(ConditionContext context, AnnotatedTypeMetadata metadata) {
		String mode = context.getEnvironment().getProperty("tokengap.mode", "proxy").trim();
		return "proxy".equalsIgnoreCase(mode) || "demo".equalsIgnoreCase(mode);
	}

}
