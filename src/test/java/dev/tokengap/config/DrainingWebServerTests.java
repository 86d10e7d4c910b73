package dev.tokengap.config;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;

import org.springframework.boot.reactor.netty.NettyWebServer;
import org.springframework.boot.web.server.GracefulShutdownResult;
import org.springframework.boot.web.server.Shutdown;
import org.springframework.http.server.reactive.HttpHandler;
import org.springframework.http.server.reactive.ReactorHttpHandlerAdapter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * A graceful shutdown's drain, then the stop that follows it, on a real Reactor Netty
 * server on loopback.
 */
class DrainingWebServerTests {

	@Test
	void stopsAtOnceRightAfterADrainHasCompleted() {
		// Spring Boot's own abort could wait forever here when the drain thread finished
		// between its two reads; this repeats the sequence to give that window a chance
		for (int i = 0; i < 50; i++) {
			DrainingWebServer server = server((request, response) -> response.setComplete());
			server.start();
			CompletableFuture<GracefulShutdownResult> drained = new CompletableFuture<>();
			server.shutDownGracefully(drained::complete);
			assertThat(drained).succeedsWithin(Duration.ofSeconds(5)).isEqualTo(GracefulShutdownResult.IDLE);
			assertTimeoutPreemptively(Duration.ofSeconds(2), server::stop);
		}
	}

	@Test
	void waitsForAnActiveRequestAndStopEndsTheWait() throws InterruptedException {
		CountDownLatch arrived = new CountDownLatch(1);
		DrainingWebServer server = server((request, response) -> {
			arrived.countDown();
			return Mono.never();
		});
		server.start();
		Disposable request = HttpClient.create()
			.get()
			.uri("http://127.0.0.1:" + server.getPort() + "/")
			.response()
			.subscribe((response) -> {
			}, (error) -> {
			});
		try {
			assertThat(arrived.await(5, TimeUnit.SECONDS)).isTrue();
			CompletableFuture<GracefulShutdownResult> drained = new CompletableFuture<>();
			server.shutDownGracefully(drained::complete);
			Thread.sleep(300);
			assertThat(drained).as("still draining while the request is active").isNotDone();
			assertTimeoutPreemptively(Duration.ofSeconds(5), server::stop);
			assertThat(drained).succeedsWithin(Duration.ofSeconds(5)).isEqualTo(GracefulShutdownResult.REQUESTS_ACTIVE);
		}
		finally {
			request.dispose();
		}
	}

	@Test
	void hasNothingToDrainBeforeItHasStarted() {
		DrainingWebServer server = server((request, response) -> response.setComplete());
		CompletableFuture<GracefulShutdownResult> drained = new CompletableFuture<>();
		server.shutDownGracefully(drained::complete);
		assertThat(drained).isCompletedWithValue(GracefulShutdownResult.IDLE);
		server.stop();
	}

	private static DrainingWebServer server(HttpHandler handler) {
		AtomicReference<DisposableServer> bound = new AtomicReference<>();
		HttpServer http = HttpServer.create().host("127.0.0.1").port(0).doOnBound(bound::set);
		return new DrainingWebServer(
				new NettyWebServer(http, new ReactorHttpHandlerAdapter(handler), null, Shutdown.IMMEDIATE, null),
				bound);
	}

}
