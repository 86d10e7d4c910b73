package dev.tokengap.config;

import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.boot.web.server.context.WebServerInitializedEvent;
import org.springframework.context.ApplicationListener;

import dev.tokengap.sim.DemoLoad;
import dev.tokengap.sim.DemoProperties;
import dev.tokengap.sim.SimulatorProperties;

/**
 * Starts the demo load once the proxy port is known (not the management port).
 */
class DemoLoadStarter implements ApplicationListener<WebServerInitializedEvent>, AutoCloseable {

	private final DemoProperties demo;

	private final SimulatorProperties simulator;

	private volatile DemoLoad load;

	DemoLoadStarter(DemoProperties demo, SimulatorProperties simulator) {
		this.demo = demo;
		this.simulator = simulator;
	}

	@Override
	public void onApplicationEvent(WebServerInitializedEvent event) {
		WebServerApplicationContext context = event.getApplicationContext();
		if (context.getServerNamespace() != null || this.load != null) {
			return;
		}
		DemoLoad started = new DemoLoad(event.getWebServer().getPort(), this.simulator.model(),
				this.demo.concurrency());
		started.start();
		this.load = started;
	}

	@Override
	public void close() {
		DemoLoad started = this.load;
		if (started != null) {
			started.close();
		}
	}

}
