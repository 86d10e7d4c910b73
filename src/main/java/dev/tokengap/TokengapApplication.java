package dev.tokengap;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;
import org.springframework.core.env.SimpleCommandLinePropertySource;
import org.springframework.core.env.StandardEnvironment;

/**
 * tokengap: a streaming proxy for vLLM that times every SSE event as the client sees it.
 */
@SpringBootApplication
@ConfigurationPropertiesScan
public class TokengapApplication {

	public static void main(String[] args) {
		SpringApplication application = new SpringApplication(TokengapApplication.class);
		if (simulatorMode(args)) {
			// The simulator is a bare Reactor Netty server: no proxy port, no management port.
			application.setWebApplicationType(WebApplicationType.NONE);
			application.setKeepAlive(true);
		}
		application.run(args);
	}

	static boolean simulatorMode(String[] args) {
		StandardEnvironment environment = new StandardEnvironment();
		environment.getPropertySources().addFirst(new SimpleCommandLinePropertySource(args));
		return "simulator".equalsIgnoreCase(environment.getProperty("tokengap.mode", "proxy").trim());
	}

}
