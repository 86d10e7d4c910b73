package dev.tokengap.proxy;

import java.net.URI;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.IntStream;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Metrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoop;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.Connection;
import reactor.netty.DisposableServer;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

import dev.tokengap.metrics.W3cRequestTracer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One engine client and pool per proxy event loop: a request's engine connection runs on
 * its client connection's loop, and {@code max-connections} is split over the loops.
 */
class UpstreamClientLoopsTests {

	private final List<Runnable> closing = new CopyOnWriteArrayList<>();

	@AfterEach
	void close() {
		this.closing.forEach(Runnable::run);
	}

	@Test
	void aRequestsEngineConnectionRunsOnItsClientConnectionsLoop() {
		DisposableServer engine = HttpServer.create()
			.host("127.0.0.1")
			.port(0)
			.handle((request, response) -> response.sendString(Mono.just("{}")))
			.bindNow();
		this.closing.add(engine::disposeNow);
		SimpleMeterRegistry registry = new SimpleMeterRegistry();
		Metrics.addRegistry(registry);
		this.closing.add(() -> Metrics.removeRegistry(registry));
		ProxyEventLoops loops = ProxyEventLoops.create();
		UpstreamClient upstream = new UpstreamClient(properties("http://127.0.0.1:" + engine.port(), 64), loops, null);
		this.closing.add(0, upstream::close);
		List<EventLoop[]> seen = new CopyOnWriteArrayList<>();
		DisposableServer proxy = HttpServer.create()
			.host("127.0.0.1")
			.port(0)
			.runOn(loops)
			.handle((request, response) -> relay(upstream, request, response, seen))
			.bindNow();
		this.closing.add(0, proxy::disposeNow);
		// A connection of its own per request: the server spreads them over its loops.
		HttpClient client = HttpClient.newConnection().baseUrl("http://127.0.0.1:" + proxy.port());
		int requests = 4 * upstream.loops();
		List<String> answers = Flux.fromStream(IntStream.range(0, requests).boxed())
			.flatMap((i) -> client.get().uri("/v1/models").responseContent().aggregate().asString(), 4)
			.collectList()
			.block(Duration.ofSeconds(30));
		assertThat(answers).hasSize(requests).containsOnly("{}");
		assertThat(seen).hasSize(requests)
			.allSatisfy((pair) -> assertThat(pair[1]).as("the engine connection's loop").isSameAs(pair[0]));
		Set<EventLoop> used = ConcurrentHashMap.newKeySet();
		seen.forEach((pair) -> used.add(pair[0]));
		assertThat(used).as("client connections on several loops").hasSizeGreaterThan(1);
		// Every loop's pool has series of its own, named engine, told apart by their id.
		Collection<Gauge> bounds = registry.find("reactor.netty.connection.provider.max.connections")
			.tag("name", UpstreamClient.POOL_NAME)
			.gauges()
			.stream()
			.filter((gauge) -> gauge.getId().getTag("remote.address").endsWith(":" + engine.port()))
			.toList();
		assertThat(bounds).hasSize(used.size());
		assertThat(bounds.stream().map((gauge) -> gauge.getId().getTag("id")).distinct()).hasSize(used.size());
		assertThat(bounds).allSatisfy((gauge) -> assertThat((int) gauge.value())
			.isIn(Arrays.stream(UpstreamClient.shares(64, upstream.loops())).boxed().toList()));
	}

	private static Mono<Void> relay(UpstreamClient upstream, HttpServerRequest request, HttpServerResponse response,
			List<EventLoop[]> seen) {
		EventLoop clientLoop = ((Connection) request).channel().eventLoop();
		return upstream.exchange(request, Unpooled.EMPTY_BUFFER, "r", new W3cRequestTracer(1).start(null, null))
			.flatMap((head) -> {
				seen.add(new EventLoop[] { clientLoop, head.connection().channel().eventLoop() });
				return response.send(head.connection().inbound().receive().retain()).then();
			});
	}

	/**
	 * An engine on a one-digit port is reached there, with that port in the Host header.
	 * Binding such a port takes privileges: skipped without them.
	 */
	@Test
	void anEngineOnAOneDigitPortIsReached() {
		List<String> hosts = new CopyOnWriteArrayList<>();
		DisposableServer engine = null;
		for (int port = 9; port >= 1 && engine == null; port--) {
			try {
				engine = HttpServer.create().host("127.0.0.1").port(port).handle((request, response) -> {
					hosts.add(request.requestHeaders().get("host"));
					return response.sendString(Mono.just("{}"));
				}).bindNow();
			}
			catch (RuntimeException ex) {
				// taken, or not ours to bind
			}
		}
		Assumptions.assumeTrue(engine != null, "no port from 1 to 9 could be bound here");
		this.closing.add(engine::disposeNow);
		ProxyEventLoops loops = ProxyEventLoops.create();
		UpstreamClient upstream = new UpstreamClient(properties("http://127.0.0.1:" + engine.port(), 4), loops, null);
		this.closing.add(0, upstream::close);
		DisposableServer proxy = HttpServer.create()
			.host("127.0.0.1")
			.port(0)
			.runOn(loops)
			.handle((request, response) -> relay(upstream, request, response, new CopyOnWriteArrayList<>()))
			.bindNow();
		this.closing.add(0, proxy::disposeNow);
		String answer = HttpClient.create()
			.get()
			.uri("http://127.0.0.1:" + proxy.port() + "/v1/models")
			.responseContent()
			.aggregate()
			.asString()
			.block(Duration.ofSeconds(30));
		assertThat(answer).isEqualTo("{}");
		assertThat(hosts).containsExactly("127.0.0.1:" + engine.port());
	}

	@Test
	void splitsMaxConnectionsOverTheLoopsSoThatTheyAddUpToIt() {
		assertThat(UpstreamClient.shares(2048, 4)).containsExactly(512, 512, 512, 512);
		assertThat(UpstreamClient.shares(10, 4)).as("rounded down, the first ones one more")
			.containsExactly(3, 3, 2, 2);
		assertThat(UpstreamClient.shares(7, 1)).containsExactly(7);
		assertThat(UpstreamClient.shares(2, 4)).as("at least one per loop").containsExactly(1, 1, 1, 1);
	}

	private static UpstreamProperties properties(String url, int maxConnections) {
		return new UpstreamProperties(URI.create(url), Duration.ofSeconds(10), Duration.ofSeconds(10),
				Duration.ofSeconds(5), maxConnections, Duration.ofSeconds(4), Duration.ofSeconds(5),
				Duration.ofMinutes(10), null);
	}

}
