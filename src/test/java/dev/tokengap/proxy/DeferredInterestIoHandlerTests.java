package dev.tokengap.proxy;

import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandle;
import io.netty.channel.IoHandler;
import io.netty.channel.IoHandlerContext;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.IoOps;
import io.netty.channel.IoRegistration;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollIoOps;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.resources.LoopResources;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link DeferredInterestIoHandler} under a real Reactor Netty server on real epoll
 * loops: the kernel sees no interest change for a keep-alive request (Netty's own handler
 * makes two), and bodies that need reading turned off and on, and writes that need
 * writability, still flow. The calls that reach the kernel are counted by a handler
 * between the deferring one and Netty's.
 */
class DeferredInterestIoHandlerTests {

	private final AtomicLong kernelChanges = new AtomicLong();

	private final AtomicLong writabilityWaits = new AtomicLong();

	private EventLoopGroup loops;

	private DisposableServer server;

	@AfterEach
	void stop() {
		if (this.server != null) {
			this.server.disposeNow();
		}
		this.loops.shutdownGracefully(0, 5, TimeUnit.SECONDS).syncUninterruptibly();
	}

	@Test
	void aKeepAliveRequestChangesNoInterestInTheKernel() throws Exception {
		start(DeferredInterestIoHandler.factory(counting(EpollIoHandler.newFactory())));
		assertThat(changesPerRequest()).isLessThan(0.1);
	}

	@Test
	void nettysOwnHandlerChangesInterestTwicePerRequest() throws Exception {
		// what the test above would see without the deferral: the setup exercises it
		start(counting(EpollIoHandler.newFactory()));
		assertThat(changesPerRequest()).isGreaterThanOrEqualTo(2.0);
	}

	/**
	 * The handler takes the body a read at a time, 1 ms apart: reading goes off and on.
	 */
	@Test
	void aBodyReadWithReadingTurnedOffAndOnArrivesWhole() throws Exception {
		start(DeferredInterestIoHandler.factory(counting(EpollIoHandler.newFactory())));
		byte[] body = new byte[1024 * 1024];
		Arrays.fill(body, (byte) 'x');
		HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
		for (int i = 0; i < 3; i++) {
			HttpResponse<String> response = client.send(HttpRequest.newBuilder(uri("/slow-count"))
				.POST(HttpRequest.BodyPublishers.ofByteArray(body))
				.build(), HttpResponse.BodyHandlers.ofString());
			assertThat(response.body()).isEqualTo(Integer.toString(body.length));
		}
	}

	/**
	 * The client reads nothing for 500 ms: the server's socket buffer fills, it waits for
	 * writability (the kernel is asked for EPOLLOUT and later not), and the rest follows.
	 */
	@Test
	void aResponseToAClientThatWaitsBeforeReadingArrivesWhole() throws Exception {
		start(DeferredInterestIoHandler.factory(counting(EpollIoHandler.newFactory())));
		try (Socket socket = new Socket()) {
			socket.setReceiveBufferSize(64 * 1024);
			socket.connect(new InetSocketAddress("127.0.0.1", this.server.port()));
			socket.getOutputStream()
				.write("GET /big HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
			Thread.sleep(500);
			InputStream in = socket.getInputStream();
			byte[] buffer = new byte[65536];
			long total = 0;
			int read;
			while ((read = in.read(buffer)) >= 0) {
				total += read;
			}
			assertThat(total).isGreaterThan(BIG);
		}
		assertThat(this.writabilityWaits.get()).as("the kernel was asked for EPOLLOUT").isPositive();
	}

	@Test
	void connectionsClosedByTheClientLeaveTheLoopsServing() throws Exception {
		start(DeferredInterestIoHandler.factory(counting(EpollIoHandler.newFactory())));
		for (int i = 0; i < 200; i++) {
			try (Socket socket = new Socket("127.0.0.1", this.server.port())) {
				socket.setSoLinger(true, 0);
				socket.getOutputStream()
					.write("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nab".getBytes());
			}
		}
		HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
		HttpResponse<String> response = client.send(
				HttpRequest.newBuilder(uri("/echo")).POST(HttpRequest.BodyPublishers.ofString("still")).build(),
				HttpResponse.BodyHandlers.ofString());
		assertThat(response.body()).isEqualTo("still");
	}

	private static final int BIG = 8 * 1024 * 1024;

	private void start(IoHandlerFactory factory) {
		this.loops = new MultiThreadIoEventLoopGroup(1, factory);
		EventLoopGroup group = this.loops;
		LoopResources resources = (useNative) -> group;
		this.server = HttpServer.create()
			.host("127.0.0.1")
			.port(0)
			.runOn(resources)
			.route((routes) -> routes
				.post("/echo", (request, response) -> response.send(request.receive().aggregate().retain()))
				.post("/slow-count",
						(request,
								response) -> response.sendString(request.receive()
									.map(ByteBuf::readableBytes)
									.delayElements(Duration.ofMillis(1), Schedulers.single())
									.reduce(0, Integer::sum)
									.map(String::valueOf)))
				.get("/big",
						(request, response) -> response
							.send(Flux.range(0, BIG / 65536 + 1).map((i) -> Unpooled.wrappedBuffer(new byte[65536])))))
			.bindNow();
	}

	/** Kernel interest changes per keep-alive POST after the connection is set up. */
	private double changesPerRequest() throws Exception {
		HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
		for (int i = 0; i < 10; i++) {
			echo(client, i);
		}
		long before = this.kernelChanges.get();
		int requests = 100;
		for (int i = 0; i < requests; i++) {
			echo(client, i);
		}
		return (double) (this.kernelChanges.get() - before) / requests;
	}

	private void echo(HttpClient client, int i) throws Exception {
		HttpResponse<String> response = client.send(
				HttpRequest.newBuilder(uri("/echo")).POST(HttpRequest.BodyPublishers.ofString("request " + i)).build(),
				HttpResponse.BodyHandlers.ofString());
		assertThat(response.body()).isEqualTo("request " + i);
	}

	private URI uri(String path) {
		return URI.create("http://127.0.0.1:" + this.server.port() + path);
	}

	/** Netty's handlers, with every interest change they make counted. */
	private IoHandlerFactory counting(IoHandlerFactory epoll) {
		return (executor) -> new CountingIoHandler(epoll.newHandler(executor), this.kernelChanges,
				this.writabilityWaits);
	}

	private record CountingIoHandler(IoHandler epoll, AtomicLong changes,
			AtomicLong writabilityWaits) implements IoHandler {

		@Override
		public void initialize() {
			this.epoll.initialize();
		}

		@Override
		public int run(IoHandlerContext context) {
			return this.epoll.run(context);
		}

		@Override
		public void prepareToDestroy() {
			this.epoll.prepareToDestroy();
		}

		@Override
		public void destroy() {
			this.epoll.destroy();
		}

		@Override
		public IoRegistration register(IoHandle handle) throws Exception {
			IoRegistration registration = this.epoll.register(handle);
			return new IoRegistration() {

				@Override
				public <T> T attachment() {
					return registration.attachment();
				}

				@Override
				public long submit(IoOps ops) {
					CountingIoHandler.this.changes.incrementAndGet();
					if (((EpollIoOps) ops).contains(EpollIoOps.EPOLLOUT)) {
						CountingIoHandler.this.writabilityWaits.incrementAndGet();
					}
					return registration.submit(ops);
				}

				@Override
				public boolean isValid() {
					return registration.isValid();
				}

				@Override
				public boolean cancel() {
					return registration.cancel();
				}

			};
		}

		@Override
		public void wakeup() {
			this.epoll.wakeup();
		}

		@Override
		public boolean isCompatible(Class<? extends IoHandle> handleType) {
			return this.epoll.isCompatible(handleType);
		}

	}

}
