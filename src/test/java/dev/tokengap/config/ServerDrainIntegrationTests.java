package dev.tokengap.config;

import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.web.server.GracefulShutdownResult;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.boot.web.server.context.WebServerInitializedEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;

import dev.tokengap.TokengapApplication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * Both of the application's ports, the proxy's and the management one, drain with a
 * {@link ServerDrain} of their own context on a graceful shutdown, not with Spring Boot's
 * own, whose stop can hang.
 */
class ServerDrainIntegrationTests {

	@Test
	void bothPortsDrainWithTheDrainWhoseStopCannotHang() {
		List<WebServerInitializedEvent> servers = new CopyOnWriteArrayList<>();
		SpringApplication application = new SpringApplication(TokengapApplication.class);
		application.addListeners((ApplicationListener<WebServerInitializedEvent>) servers::add);
		ConfigurableApplicationContext context = application.run("--server.port=0", "--management.server.port=0",
				"--tokengap.mode=demo", "--tokengap.demo.load=false");
		try {
			assertThat(servers).hasSize(2).allSatisfy(ServerDrainIntegrationTests::drainsWithItsOwnServerDrain);
			assertThat(servers.get(0).getWebServer().getPort()).isNotEqualTo(servers.get(1).getWebServer().getPort());
		}
		finally {
			assertTimeoutPreemptively(Duration.ofSeconds(20), context::close);
		}
	}

	@Test
	void aPausedContextKeepsServingOnTheProxyPort() throws Exception {
		ConfigurableApplicationContext context = new SpringApplication(TokengapApplication.class).run("--server.port=0",
				"--management.server.port=0", "--tokengap.mode=demo", "--tokengap.demo.load=false");
		try {
			int port = ((WebServerApplicationContext) context).getWebServer().getPort();
			// what the test framework does to a cached context it is not using
			context.pause();
			try (Socket socket = new Socket()) {
				socket.connect(new InetSocketAddress("127.0.0.1", port), 2000);
			}
		}
		finally {
			context.close();
		}
	}

	private static void drainsWithItsOwnServerDrain(WebServerInitializedEvent event) {
		CompletableFuture<GracefulShutdownResult> own = new CompletableFuture<>();
		event.getWebServer().shutDownGracefully(own::complete);
		assertThat(own).as("Spring Boot's own drain is off").isCompletedWithValue(GracefulShutdownResult.IMMEDIATE);
		Map<String, ServerDrain> drains = event.getApplicationContext().getBeansOfType(ServerDrain.class);
		assertThat(drains.values()).singleElement().satisfies((drain) -> {
			assertThat(drain.graceful()).as("server.shutdown=graceful").isTrue();
			assertThat(drain.port()).isEqualTo(event.getWebServer().getPort());
		});
	}

}
