package dev.tokengap.sim;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

import dev.tokengap.testsupport.StreamingClient;

/**
 * Base for the simulator's tests that want a new {@link FastSimulator} for every test (no
 * trace, counter or fault left over from the one before), with a client of it.
 */
abstract class FreshSimulatorTests {

	SimulatorServer server;

	StreamingClient client;

	@BeforeEach
	void startSimulator() {
		this.server = FastSimulator.start();
		this.client = FastSimulator.client(this.server);
	}

	@AfterEach
	void stopSimulator() {
		this.server.close();
	}

}
