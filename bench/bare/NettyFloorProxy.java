// The floor under tokengap's performance targets: the least a Netty program does to proxy the
// churn benchmark's traffic, with none of tokengap's work (no SSE scan, no timing, no metrics, no
// Reactor, no request parsing, no engine pool: one engine connection per client connection, on
// the client connection's event loop, as nginx's keep-alive pool ends up using them). Whatever
// tokengap costs above this is tokengap's; what this costs above nginx is the JVM's and Netty's,
// and no tokengap built on Reactor Netty can go below it. Run by
// bench/overhead.sh (FLOOR="tcp http"); not part of tokengap.
//
//   java -cp CLASSPATH bench/bare/NettyFloorProxy.java tcp|http[+tuned] PORT UPSTREAM_PORT
//
//   tcp   bytes as they come, both ways, flushed at once: not even HTTP's framing is read
//   http  Netty's HTTP/1.1 codecs on both sides (what any proxy that knows where a response
//         ends, so that it can reuse connections and count requests, must run), each decoded
//         piece forwarded and flushed as it comes; chunked stays chunked
//   +tuned  with the Netty settings tokengap's main method sets (TokengapApplication.nettyDefaults:
//           no leak detection, the pooled allocator); without it, Netty's defaults
//
// Two epoll event loops, as tokengap runs on this 2-core machine (reactor.netty.ioWorkerCount).
import java.net.InetSocketAddress;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBufAllocator;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.ResourceLeakDetector;

public class NettyFloorProxy {

	public static void main(String[] args) throws Exception {
		String mode = args[0];
		if (mode.endsWith("+tuned")) {
			// Before any Netty class reads them, as in TokengapApplication.nettyDefaults().
			System.setProperty("io.netty.leakDetection.level", "disabled");
			System.setProperty("io.netty.allocator.type", "pooled");
			mode = mode.substring(0, mode.length() - "+tuned".length());
		}
		boolean http = switch (mode) {
			case "tcp" -> false;
			case "http" -> true;
			default -> throw new IllegalArgumentException("tcp or http, with or without +tuned, not " + args[0]);
		};
		int port = Integer.parseInt(args[1]);
		InetSocketAddress upstream = new InetSocketAddress("127.0.0.1", Integer.parseInt(args[2]));
		EventLoopGroup loops = new MultiThreadIoEventLoopGroup(2, EpollIoHandler.newFactory());
		new ServerBootstrap().group(loops)
			.channel(EpollServerSocketChannel.class)
			.childOption(ChannelOption.TCP_NODELAY, true)
			.childOption(ChannelOption.AUTO_READ, false)
			.childHandler(new ChannelInitializer<SocketChannel>() {
				@Override
				protected void initChannel(SocketChannel client) {
					if (http) {
						client.pipeline().addLast(new HttpServerCodec());
					}
					client.pipeline().addLast(new Relay(client, upstream, http));
				}
			})
			.bind(port)
			.sync();
		// Which settings this run has: Netty's defaults, or tokengap's (+tuned).
		System.out.println("NettyFloorProxy " + args[0] + " on port " + port + " to " + upstream + ", leak detection "
				+ ResourceLeakDetector.getLevel() + ", allocator " + ByteBufAllocator.DEFAULT.getClass().getSimpleName());
	}

	/**
	 * The client connection's side: connects its own engine connection on the same loop when
	 * the client connects, then forwards what it reads there.
	 */
	static final class Relay extends ChannelInboundHandlerAdapter {

		private final Channel client;

		private final InetSocketAddress upstream;

		private final boolean http;

		private Channel engine;

		Relay(Channel client, InetSocketAddress upstream, boolean http) {
			this.client = client;
			this.upstream = upstream;
			this.http = http;
		}

		@Override
		public void channelActive(ChannelHandlerContext ctx) {
			new Bootstrap().group(this.client.eventLoop())
				.channel(EpollSocketChannel.class)
				.option(ChannelOption.TCP_NODELAY, true)
				.handler(new ChannelInitializer<SocketChannel>() {
					@Override
					protected void initChannel(SocketChannel engine) {
						if (Relay.this.http) {
							engine.pipeline().addLast(new HttpClientCodec());
						}
						engine.pipeline().addLast(new Forward(Relay.this.client));
					}
				})
				.connect(this.upstream)
				.addListener((ChannelFutureListener) (future) -> {
					if (!future.isSuccess()) {
						this.client.close();
						return;
					}
					this.engine = future.channel();
					this.engine.closeFuture().addListener((f) -> this.client.close());
					this.client.config().setAutoRead(true);
				});
		}

		@Override
		public void channelRead(ChannelHandlerContext ctx, Object msg) {
			if (this.engine == null) {
				ReferenceCountUtil.release(msg);
				return;
			}
			this.engine.writeAndFlush(msg, this.engine.voidPromise());
		}

		@Override
		public void channelInactive(ChannelHandlerContext ctx) {
			if (this.engine != null) {
				this.engine.close();
			}
		}

		@Override
		public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
			ctx.close();
		}

	}

	/** The engine connection's side: what it reads goes to the client, flushed at once. */
	static final class Forward extends ChannelInboundHandlerAdapter {

		private final Channel client;

		Forward(Channel client) {
			this.client = client;
		}

		@Override
		public void channelRead(ChannelHandlerContext ctx, Object msg) {
			this.client.writeAndFlush(msg, this.client.voidPromise());
		}

		@Override
		public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
			ctx.close();
		}

	}

}
