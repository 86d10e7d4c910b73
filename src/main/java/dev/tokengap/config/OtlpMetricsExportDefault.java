package dev.tokengap.config;

import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.Environment;
import org.springframework.core.env.PropertySource;

/**
 * OTLP metrics export only where an endpoint is set: Spring Boot's OTLP registry would
 * otherwise push to {@code localhost:4318} every minute. Without
 * {@code management.otlp.metrics.export.url} (and no explicit
 * {@code management.otlp.metrics.export.enabled}) the export is off, so there is no OTLP
 * registry and the GenAI instruments are never built.
 *
 * <p>
 * The default is answered when asked, not when the environment is prepared, so that an
 * endpoint added to the environment later (a test's dynamic properties) still turns the
 * export on; any source that sets {@code enabled} itself comes first.
 */
class OtlpMetricsExportDefault implements EnvironmentPostProcessor {

	static final String URL = "management.otlp.metrics.export.url";

	static final String ENABLED = "management.otlp.metrics.export.enabled";

	@Override
	public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
		environment.getPropertySources().addLast(new OffWithoutUrl(environment));
	}

	/**
	 * {@code enabled=false} while no source sets the URL. Its source is not the
	 * environment itself: Boot would then read this source's environment as nested
	 * sources, this one among them.
	 */
	static final class OffWithoutUrl extends PropertySource<String> {

		private final Environment environment;

		OffWithoutUrl(Environment environment) {
			super("tokengapOtlpMetricsExportDefault", ENABLED + "=false without " + URL);
			this.environment = environment;
		}

		@Override
		public Object getProperty(String name) {
			if (!ENABLED.equals(name)) {
				return null;
			}
			return this.environment.containsProperty(URL) ? null : "false";
		}

	}

}
