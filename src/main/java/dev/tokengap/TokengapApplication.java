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
@SpringBootApplication(proxyBeanMethods = false)
@ConfigurationPropertiesScan
public class TokengapApplication {

	public static void main(String[] args) {
		nettyDefaults();
		if (args.length > 0 && "bench".equals(args[0])) {
			// A client, not a server: no Spring context.
			System.exit(BenchCommand.run(Arrays.copyOfRange(args, 1, args.length), System.out, System.err));
		}
		SpringApplication application = new SpringApplication(TokengapApplication.class);
		if (simulatorMode(args)) {
			// The simulator is a bare Reactor Netty server: no proxy port,
			// no management port.
			application.setWebApplicationType(WebApplicationType.NONE);
			application.setKeepAlive(true);
		}
		application.run(args);
	}

	/**
	 * Netty settings measured in docs/performance.md: no leak tracking on every buffer at
	 * every handler (the tests run at paranoid instead) and the pooled allocator rather
	 * than Netty 4.2's adaptive one cut CPU per relayed event by 7-8%; one event loop per
	 * processor, as nginx has one worker per core and as the image and the Helm chart set
	 * it, instead of Reactor Netty's at least 4 (on 2 cores under request churn: 21 %
	 * less CPU per event and a quarter of the coalesced events). A -D flag given on the
	 * command line wins.
	 */
	static void nettyDefaults() {
		setIfAbsent("io.netty.leakDetection.level", "disabled");
		setIfAbsent("io.netty.allocator.type", "pooled");
		setIfAbsent("reactor.netty.ioWorkerCount", Integer.toString(Runtime.getRuntime().availableProcessors()));
	}

	private static void setIfAbsent(String key, String value) {
		if (System.getProperty(key) == null) {
			System.setProperty(key, value);
		}
	}

	static boolean simulatorMode(String[] args) {
		StandardEnvironment environment = new StandardEnvironment();
		environment.getPropertySources().addFirst(new SimpleCommandLinePropertySource(args));
		return "simulator".equalsIgnoreCase(environment.getProperty("tokengap.mode", "proxy").trim());
	}

}
