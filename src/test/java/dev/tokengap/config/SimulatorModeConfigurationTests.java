package dev.tokengap.config;

import dev.tokengap.sim.SimulatorServer;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

class SimulatorModeConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withUserConfiguration(SimulatorModeConfiguration.class);

	@Test
	void simulatorModeStartsTheSimulatorOnItsPort() {
		this.runner.withPropertyValues("tokengap.mode=simulator", "tokengap.sim.port=0").run((context) -> {
			SimulatorServer server = context.getBean(SimulatorServer.class);
			assertThat(server.port()).isPositive();
			assertThat(server.engine().running()).isZero();
		});
	}

	@Test
	void otherModesLeaveTheSimulatorOut() {
		this.runner.withPropertyValues("tokengap.mode=proxy")
			.run((context) -> assertThat(context).doesNotHaveBean(SimulatorServer.class));
		this.runner.run((context) -> assertThat(context).doesNotHaveBean(SimulatorServer.class));
	}

}
