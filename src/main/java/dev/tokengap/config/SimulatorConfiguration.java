package dev.tokengap.config;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.tokengap.sim.SimulatorProperties;
import dev.tokengap.sim.SimulatorServer;

/**
 * Simulator mode ({@code --tokengap.mode=simulator}): only the vLLM stand-in, on its own port.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty(name = "tokengap.mode", havingValue = "simulator")
class SimulatorConfiguration {

	private static final Log logger = LogFactory.getLog(SimulatorConfiguration.class);

	@Bean(destroyMethod = "close")
	SimulatorServer simulatorServer(SimulatorProperties properties) {
		SimulatorServer server = SimulatorServer.start(properties, "0.0.0.0", properties.port());
		logger.info("vLLM simulator serving model " + properties.model() + " on http://0.0.0.0:" + server.port());
		return server;
	}

}
