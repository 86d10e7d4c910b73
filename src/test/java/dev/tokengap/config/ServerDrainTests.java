package dev.tokengap.config;

import java.net.InetAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;

import org.springframework.boot.reactor.netty.NettyReactiveWebServerFactory;
import org.springframework.boot.web.server.GracefulShutdownResult;
import org.springframework.boot.web.server.Shutdown;
import org.springframework.boot.web.server.WebServer;
import org.springframework.http.server.reactive.HttpHandler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * A graceful shutdown's drain, then the stop that follows it, on Spring Boot's Netty
 * server on loopback, built by its factory with {@link ServerDrain} as the factory's
 * customizer.
 */
class ServerDrainTests {

	@Test
	void stopsAtOnceRightAfterADrainHasCompleted() {
		// Spring Boot's own abort could wait forever here when the drain thread finished
		// between its two reads; this repeats the sequence to give that window a chance
		for (int i = 0; i < 50; i++) {
			ServerDrain drain = new ServerDrain(Duration.ofSeconds(30));
			WebServer server = server(drain, (request, response) -> response.setComplete());
			server.start();
			drain.start();
			CompletableFuture<Void> drained = new CompletableFuture<>();
			drain.stop(() -> drained.complete(null));
			assertThat(drained).succeedsWithin(Duration.ofSeconds(5));
			assertTimeoutPreemptively(Duration.ofSeconds(2), server::stop);
		}
	}

	@Test
	void waitsForAnActiveRequestAndStopEndsTheWait() throws InterruptedException {
		ServerDrain drain = new ServerDrain(Duration.ofSeconds(30));
		CountDownLatch arrived = new CountDownLatch(1);
		WebServer server = server(drain, (request, response) -> {
			arrived.countDown();
			return Mono.never();
		});
		server.start();
		drain.start();
		Disposable request = request(server);
		try {
			assertThat(arrived.await(5, TimeUnit.SECONDS)).isTrue();
			CompletableFuture<Void> drained = new CompletableFuture<>();
			drain.stop(() -> drained.complete(null));
			Thread.sleep(300);
			assertThat(drained).as("still draining while the request is active").isNotDone();
			drain.stop();
			assertThat(drained).succeedsWithin(Duration.ofSeconds(5));
			assertTimeoutPreemptively(Duration.ofSeconds(5), server::stop);
		}
		finally {
			request.dispose();
		}
	}

	@Test
	void waitsNoLongerThanTheShutdownPhaseForAnActiveRequest() throws InterruptedException {
		ServerDrain drain = new ServerDrain(Duration.ofSeconds(1));
		CountDownLatch arrived = new CountDownLatch(1);
		WebServer server = server(drain, (request, response) -> {
			arrived.countDown();
			return Mono.never();
		});
		server.start();
		drain.start();
		Disposable request = request(server);
		try {
			assertThat(arrived.await(5, TimeUnit.SECONDS)).isTrue();
			long stopping = System.nanoTime();
			CompletableFuture<Void> drained = new CompletableFuture<>();
			drain.stop(() -> drained.complete(null));
			assertThat(drained).succeedsWithin(Duration.ofSeconds(5));
			assertThat(Duration.ofNanos(System.nanoTime() - stopping)).isBetween(Duration.ofMillis(900),
					Duration.ofSeconds(3));
			assertTimeoutPreemptively(Duration.ofSeconds(5), server::stop);
		}
		finally {
			request.dispose();
		}
	}

	@Test
	void hasNothingToDrainBeforeItHasStarted() {
		ServerDrain drain = new ServerDrain(Duration.ofSeconds(30));
		WebServer server = server(drain, (request, response) -> response.setComplete());
		CompletableFuture<Void> drained = new CompletableFuture<>();
		drain.stop(() -> drained.complete(null));
		assertThat(drained).isDone();
		server.stop();
	}

	@Test
	void takesTheGracefulShutdownFromSpringBootsServer() {
		ServerDrain drain = new ServerDrain(Duration.ofSeconds(30));
		WebServer server = server(drain, (request, response) -> response.setComplete());
		server.start();
		try {
			assertThat(drain.graceful()).isTrue();
			assertThat(drain.port()).isEqualTo(server.getPort());
			CompletableFuture<GracefulShutdownResult> own = new CompletableFuture<>();
			server.shutDownGracefully(own::complete);
			assertThat(own).as("Spring Boot's own drain is off").isCompletedWithValue(GracefulShutdownResult.IMMEDIATE);
		}
		finally {
			server.stop();
		}
	}

	/**
	 * Spring Boot's server, as its factory builds it with
	 * {@code server.shutdown=graceful}.
	 */
	private static WebServer server(ServerDrain drain, HttpHandler handler) {
		NettyReactiveWebServerFactory factory = new NettyReactiveWebServerFactory(0);
		factory.setAddress(InetAddress.getLoopbackAddress());
		factory.setShutdown(Shutdown.GRACEFUL);
		drain.customize(factory);
		return factory.getWebServer(handler);
	}

	private static Disposable request(WebServer server) {
		return HttpClient.create()
			.get()
			.uri("http://127.0.0.1:" + server.getPort() + "/")
			.response()
			.subscribe((response) -> {
			}, (error) -> {
			});
	}

}
