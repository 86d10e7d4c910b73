// The floor of tokengap's own stack: Reactor Netty's HttpServer relaying to its HttpClient and
// pooled ConnectionProviders, on the same colocated event loops and with the same Netty settings
// tokengap runs with (as in tokengap's UpstreamClient, one client and pool per event loop, each
// request sent on its client connection's loop, the bound split over the loops), each engine read written and flushed on its own, and nothing measured (no
// SSE scan, no timing, no metrics, no request parsing beyond reading the body whole, as tokengap
// does to learn the model). What tokengap costs above this is tokengap's own work. Run by
// bench/overhead.sh (FLOOR="reactor"); not part of tokengap.
//
//   java -cp CLASSPATH bench/bare/ReactorNettyRelay.java reactor PORT UPSTREAM_PORT
import java.time.Duration;

import java.util.ArrayList;
import java.util.List;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.concurrent.EventExecutor;
import reactor.core.publisher.Mono;
import reactor.netty.Connection;
import reactor.netty.DisposableServer;
import reactor.netty.http.HttpProtocol;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.resources.ConnectionProvider;
import reactor.netty.resources.LoopResources;

public class ReactorNettyRelay {

	private static final String[] HOP_BY_HOP = { "connection", "keep-alive", "proxy-connection", "te", "trailer",
			"transfer-encoding", "upgrade", "host", "content-length" };

	public static void main(String[] args) throws Exception {
		// Before any Netty class reads them, as in TokengapApplication.nettyDefaults().
		System.setProperty("io.netty.leakDetection.level", "disabled");
		System.setProperty("io.netty.allocator.type", "pooled");
		int port = Integer.parseInt(args[1]);
		int upstream = Integer.parseInt(args[2]);
		int threads = Integer.getInteger("reactor.netty.ioWorkerCount", Runtime.getRuntime().availableProcessors());
		LoopResources loops = LoopResources.create("relay", threads, true);
		List<EventLoop> serverLoops = new ArrayList<>();
		for (EventExecutor executor : loops.onServer(LoopResources.DEFAULT_NATIVE)) {
			serverLoops.add((EventLoop) executor);
		}
		EventLoop[] eventLoops = serverLoops.toArray(EventLoop[]::new);
		HttpClient[] clients = new HttpClient[eventLoops.length];
		for (int i = 0; i < eventLoops.length; i++) {
			ConnectionProvider pool = ConnectionProvider.builder("relay")
				.maxConnections(2048 / eventLoops.length)
				.pendingAcquireTimeout(Duration.ofSeconds(5))
				.pendingAcquireMaxCount(-1)
				.maxIdleTime(Duration.ofSeconds(4))
				.maxLifeTime(Duration.ofMinutes(10))
				.evictInBackground(Duration.ofSeconds(1))
				.build();
			EventLoop loop = eventLoops[i];
			LoopResources only = (useNative) -> loop;
			clients[i] = HttpClient.create(pool)
				.runOn(only)
				.baseUrl("http://127.0.0.1:" + upstream)
				.compress(false)
				.followRedirect(false);
		}
		DisposableServer server = HttpServer.create()
			.port(port)
			.protocol(HttpProtocol.HTTP11)
			.runOn(loops)
			.handle((req, res) -> req.receive()
				.aggregate()
				.retain()
				.defaultIfEmpty(Unpooled.EMPTY_BUFFER)
				.flatMap((body) -> clientOf(req, eventLoops, clients).headers((headers) -> copy(req.requestHeaders(), headers))
					.request(req.method())
					.uri(req.uri())
					.send((request, out) -> out.send(Mono.just(body)))
					.responseConnection((response, connection) -> {
						res.status(response.status());
						copy(response.responseHeaders(), res.responseHeaders());
						String length = response.responseHeaders().get(HttpHeaderNames.CONTENT_LENGTH);
						if (length != null) {
							res.responseHeaders().set(HttpHeaderNames.CONTENT_LENGTH, length);
						}
						else {
							res.responseHeaders().set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
						}
						return res.send(connection.inbound().receive().retain(), (ByteBuf buf) -> true);
					})
					.then()))
			.bindNow();
		System.out.println("ReactorNettyRelay " + args[0] + " on port " + server.port() + " to 127.0.0.1:" + upstream
				+ ", " + threads + " colocated loops, a pool per loop, leak detection " + ResourceLeakDetector.getLevel()
				+ ", allocator " + io.netty.buffer.ByteBufAllocator.DEFAULT.getClass().getSimpleName());
		server.onDispose().block();
	}

	/** The client of the loop the client connection runs on. */
	private static HttpClient clientOf(HttpServerRequest req, EventLoop[] loops, HttpClient[] clients) {
		if (req instanceof Connection connection) {
			EventLoop loop = connection.channel().eventLoop();
			for (int i = 0; i < loops.length; i++) {
				if (loops[i] == loop) {
					return clients[i];
				}
			}
		}
		return clients[0];
	}

	private static void copy(HttpHeaders from, HttpHeaders to) {
		to.add(from);
		for (String name : HOP_BY_HOP) {
			to.remove(name);
		}
	}

}
