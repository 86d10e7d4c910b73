package dev.tokengap.config;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

import io.netty.channel.EventLoop;
import io.netty.channel.epoll.Epoll;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;

import dev.tokengap.proxy.ProxyEventLoops;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

/**
 * The proxy port's connections run on {@link ProxyEventLoops}' own loops
 * ({@code tokengap-epoll-N}, interest changes deferred to the next wait) where epoll is
 * available, as it is on Linux.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=0", "tokengap.mode=demo", "tokengap.demo.load=false" })
class ProxyEventLoopsIntegrationTests {

	@LocalServerPort
	int port;

	@Autowired
	ProxyEventLoops loops;

	@Autowired
	ConnectionThreads threads;

	@Test
	void theProxyPortsConnectionsRunOnTokengapsLoops() throws Exception {
		assumeThat(Epoll.isAvailable()).as("epoll").isTrue();
		assertThat(this.loops.deferred()).isTrue();
		HttpResponse<String> models = HttpClient.newHttpClient()
			.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/v1/models")).build(),
					HttpResponse.BodyHandlers.ofString());
		assertThat(models.statusCode()).isEqualTo(200);
		assertThat(this.threads.onPort(this.port)).isNotEmpty().allMatch((name) -> name.startsWith("tokengap-epoll-"));
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class Config {

		@Bean
		ConnectionThreads connectionThreads() {
			return new ConnectionThreads();
		}

		@Bean
		NettyServerCustomizer recordConnectionThreads(ConnectionThreads threads) {
			return (server) -> server.doOnConnection(
					(connection) -> threads.record(((InetSocketAddress) connection.channel().localAddress()).getPort(),
							connection.channel().eventLoop()));
		}

	}

	/** The name of the thread of each connection's event loop, by local port. */
	static final class ConnectionThreads {

		private final Set<String> names = ConcurrentHashMap.newKeySet();

		void record(int port, EventLoop loop) {
			loop.execute(() -> this.names.add(port + " " + Thread.currentThread().getName()));
		}

		Set<String> onPort(int port) {
			return this.names.stream()
				.filter((entry) -> entry.startsWith(port + " "))
				.map((entry) -> entry.substring(entry.indexOf(' ') + 1))
				.collect(Collectors.toSet());
		}

	}

}
