package dev.tokengap.config;

import dev.tokengap.sim.SimulatorProperties;
import dev.tokengap.sim.SimulatorServer;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * {@code --tokengap.mode=simulator}: runs the built-in vLLM simulator on
 * {@code tokengap.sim.port} (8000, vLLM's default), on all interfaces as vLLM does.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty(name = "tokengap.mode", havingValue = "simulator")
@EnableConfigurationProperties(SimulatorProperties.class)
class SimulatorModeConfiguration {

	private static final Log logger = LogFactory.getLog(SimulatorModeConfiguration.class);

	@Bean(destroyMethod = "close")
	SimulatorServer simulatorServer(SimulatorProperties properties) {
		SimulatorServer server = SimulatorServer.start(properties, "0.0.0.0", properties.port());
		logger.info("vLLM simulator serving '" + properties.model() + "' on port " + server.port());
		return server;
	}

}
