package dev.tokengap.config;

import java.net.URI;
import java.time.Duration;

import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;

import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.boot.web.server.context.WebServerInitializedEvent;
import org.springframework.context.ApplicationListener;

import dev.tokengap.client.HttpClients;
import dev.tokengap.sim.DemoLoad;
import dev.tokengap.sim.DemoProperties;
import dev.tokengap.sim.SimulatorProperties;

/**
 * Starts the demo load once the proxy port is known (not the management port), with
 * tokengap's client setup and a pool of its own ({@code demo-load}).
 */
class DemoLoadStarter implements ApplicationListener<WebServerInitializedEvent>, AutoCloseable {

	private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);

	private static final Duration POOL_WAIT = Duration.ofSeconds(45);

	private static final Duration MAX_IDLE = Duration.ofSeconds(4);

	private final DemoProperties demo;

	private final SimulatorProperties simulator;

	private volatile DemoLoad load;

	private volatile ConnectionProvider pool;

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
		this.pool = HttpClients.pool("demo-load", Math.max(1, this.demo.concurrency()), POOL_WAIT, MAX_IDLE, null);
		HttpClient client = HttpClients.create(this.pool, null, CONNECT_TIMEOUT)
			.baseUrl(HttpClients.baseUrl(URI.create("http://127.0.0.1:" + event.getWebServer().getPort())));
		DemoLoad started = new DemoLoad(client, this.simulator.model(), this.demo.concurrency());
		started.start();
		this.load = started;
	}

	@Override
	public void close() {
		DemoLoad started = this.load;
		if (started != null) {
			started.close();
		}
		ConnectionProvider connections = this.pool;
		if (connections != null) {
			connections.dispose();
		}
	}

}
