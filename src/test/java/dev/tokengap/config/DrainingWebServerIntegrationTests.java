package dev.tokengap.config;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.web.server.WebServer;
import org.springframework.boot.web.server.context.WebServerInitializedEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;

import dev.tokengap.TokengapApplication;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Both of the application's ports, the proxy's and the management one, drain with
 * {@link DrainingWebServer} on a graceful shutdown, not with Spring Boot's own.
 */
class DrainingWebServerIntegrationTests {

	@Test
	void bothPortsDrainWithTheServerWhoseStopCannotHang() {
		List<WebServer> servers = new CopyOnWriteArrayList<>();
		SpringApplication application = new SpringApplication(TokengapApplication.class);
		application.addListeners(
				(ApplicationListener<WebServerInitializedEvent>) (event) -> servers.add(event.getWebServer()));
		try (ConfigurableApplicationContext context = application.run("--server.port=0", "--management.server.port=0",
				"--tokengap.mode=demo", "--tokengap.demo.load=false")) {
			assertThat(servers).hasSize(2)
				.allSatisfy((server) -> assertThat(server).isInstanceOf(DrainingWebServer.class));
			assertThat(servers.get(0).getPort()).isNotEqualTo(servers.get(1).getPort());
		}
	}

}
