package dev.tokengap;

import java.util.Arrays;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;
import org.springframework.core.env.SimpleCommandLinePropertySource;
import org.springframework.core.env.StandardEnvironment;

import dev.tokengap.bench.BenchCommand;

/**
 * tokengap: a streaming proxy for vLLM that times every SSE event as the client sees it.
 */
@SpringBootApplication
@ConfigurationPropertiesScan
public class TokengapApplication {

	public static void main(String[] args) {
		if (args.length > 0 && "bench".equals(args[0])) {
			// A client, not a server: no Spring context.
			System.exit(BenchCommand.run(Arrays.copyOfRange(args, 1, args.length), System.out, System.err));
		}
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
