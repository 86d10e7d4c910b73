package dev.tokengap.backend;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import io.netty.buffer.Unpooled;
import reactor.core.publisher.Mono;
import reactor.netty.Connection;
import reactor.netty.DisposableServer;
import reactor.netty.NettyInbound;
import reactor.netty.NettyOutbound;
import reactor.netty.tcp.TcpClient;
import reactor.netty.tcp.TcpServer;

/**
 * What a Kubernetes ClusterIP Service does to a kept-alive scrape: one address on
 * loopback that forwards each new TCP connection to the next of several engines, round
 * robin (once {@link #pool()} is called; to the first engine only before). A connection
 * that carries {@code GET /metrics} is closed after {@code lifetime} (as a pod going away
 * or a keep-alive timeout would), so that the scraper reconnects and lands on another
 * engine; streams run to their end.
 *
 * <pre>
 * client ─► front :port ─► connection 1 ─► engine A
 *                      └─► connection 2 ─► engine B
 *                      └─► connection 3 ─► engine A ...
 * </pre>
 *
 * Bytes are copied through arrays, so no buffer of one connection is handed to another
 * and the leak detector has nothing of the front's to track.
 */
final class AlternatingFront implements AutoCloseable {

	private volatile List<Integer> ports;

	private final Duration lifetime;

	private final AtomicLong connections = new AtomicLong();

	private volatile boolean pooled;

	private final DisposableServer server;

	private AlternatingFront(List<Integer> ports, Duration lifetime) {
		this.ports = ports;
		this.lifetime = lifetime;
		this.server = TcpServer.create()
			.host("127.0.0.1")
			.port(0)
			.handle(this::forward)
			.bindNow(Duration.ofSeconds(10));
	}

	static AlternatingFront start(Duration lifetime, int... ports) {
		return new AlternatingFront(java.util.Arrays.stream(ports).boxed().toList(), lifetime);
	}

	String url() {
		return "http://127.0.0.1:" + this.server.port();
	}

	/**
	 * From now on, new connections alternate over all engines; before, all go to the
	 * first.
	 */
	void pool() {
		this.pooled = true;
	}

	/**
	 * From now on, new connections go to these engines instead (a pod replaced behind the
	 * Service).
	 * @param replacements the engines' ports
	 */
	void replace(int... replacements) {
		this.ports = java.util.Arrays.stream(replacements).boxed().toList();
	}

	/**
	 * @return the connections accepted so far
	 */
	long connections() {
		return this.connections.get();
	}

	private Mono<Void> forward(NettyInbound in, NettyOutbound out) {
		long n = this.connections.getAndIncrement();
		List<Integer> current = this.ports;
		int port = this.pooled ? current.get((int) (n % current.size())) : current.get(0);
		return TcpClient.create()
			.host("127.0.0.1")
			.port(port)
			.connect()
			.flatMap((engine) -> pipe(in, out, engine))
			.onErrorResume((ex) -> Mono.empty());
	}

	private Mono<Void> pipe(NettyInbound in, NettyOutbound out, Connection engine) {
		AtomicBoolean scrape = new AtomicBoolean();
		Mono<Void> up = engine.outbound()
			.send(in.receive()
				.asByteArray()
				.doOnNext((bytes) -> noteScrape(bytes, scrape))
				.map(Unpooled::wrappedBuffer))
			.then();
		Mono<Void> down = out.send(engine.inbound().receive().asByteArray().map(Unpooled::wrappedBuffer)).then();
		Mono<Void> recycled = Mono.delay(this.lifetime)
			.then(Mono.defer(() -> scrape.get() ? Mono.empty() : Mono.never()));
		return Mono.firstWithSignal(up, down, recycled)
			.onErrorResume((ex) -> Mono.empty())
			.doFinally((signal) -> engine.dispose());
	}

	private static void noteScrape(byte[] bytes, AtomicBoolean scrape) {
		if (new String(bytes, 0, Math.min(bytes.length, 12), StandardCharsets.US_ASCII).equals("GET /metrics")) {
			scrape.set(true);
		}
	}

	@Override
	public void close() {
		this.server.disposeNow(Duration.ofSeconds(5));
	}

}
