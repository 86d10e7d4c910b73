package dev.tokengap.sim;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import dev.tokengap.testsupport.StreamingClient;

/**
 * Base for the simulator's tests that share one {@link FastSimulator} per test class:
 * started before the first test, closed after the last, with a client of it.
 */
abstract class SharedSimulatorTests {

	static SimulatorServer server;

	static StreamingClient client;

	@BeforeAll
	static void startSimulator() {
		server = FastSimulator.start();
		client = FastSimulator.client(server);
	}

	@AfterAll
	static void stopSimulator() {
		server.close();
	}

}
