// What Reactor Netty's HTTP server costs per request, on its own: two servers with the same trivial
// handler, one on Reactor Netty's HttpServer (as tokengap's proxy port is served), one on Netty's
// HttpServerCodec alone. Both read the request body, then answer with the Node backend's
// non-streaming chat completion (its bytes, a content-length), on 2 epoll event loops. Run by
// bench/bare-servers.sh; not part of tokengap.
//
//   java -cp CLASSPATH bench/bare/BareServers.java reactor|netty PORT
import java.nio.charset.StandardCharsets;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpServerKeepAliveHandler;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import reactor.core.publisher.Mono;
import reactor.netty.http.HttpProtocol;
import reactor.netty.http.server.HttpServer;
import reactor.netty.resources.LoopResources;

public class BareServers {

	static final byte[] BODY = ("{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"created\":1,"
			+ "\"model\":\"bench-model\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","
			+ "\"reasoning_content\":null,\"content\":\" tok tok tok tok tok tok tok tok tok tok tok tok tok tok"
			+ " tok tok\",\"tool_calls\":[]},\"logprobs\":null,\"finish_reason\":\"length\",\"stop_reason\":null}],"
			+ "\"usage\":{\"prompt_tokens\":1,\"total_tokens\":17,\"completion_tokens\":16,"
			+ "\"prompt_tokens_details\":null},\"prompt_logprobs\":null,\"kv_transfer_params\":null}")
		.getBytes(StandardCharsets.UTF_8);

	public static void main(String[] args) throws Exception {
		int port = Integer.parseInt(args[1]);
		if (args[0].equals("reactor")) {
			HttpServer.create()
				.port(port)
				.protocol(HttpProtocol.HTTP11)
				.runOn(LoopResources.create("bare", 1, 2, true))
				.handle((in, out) -> in.receive().then(Mono.defer(() -> {
					out.status(200)
						.header("content-type", "application/json")
						.header("content-length", String.valueOf(BODY.length));
					return out.send(Mono.just(Unpooled.wrappedBuffer(BODY))).then();
				})))
				.bindNow();
		}
		else {
			new ServerBootstrap().group(new MultiThreadIoEventLoopGroup(2, EpollIoHandler.newFactory()))
				.channel(EpollServerSocketChannel.class)
				.childHandler(new ChannelInitializer<SocketChannel>() {
					@Override
					protected void initChannel(SocketChannel ch) {
						ch.pipeline()
							.addLast(new HttpServerCodec(), new HttpServerKeepAliveHandler(),
									new SimpleChannelInboundHandler<HttpObject>() {
										@Override
										protected void channelRead0(ChannelHandlerContext ctx, HttpObject msg) {
											if (msg instanceof LastHttpContent) {
												DefaultFullHttpResponse response = new DefaultFullHttpResponse(
														HttpVersion.HTTP_1_1, HttpResponseStatus.OK,
														Unpooled.wrappedBuffer(BODY));
												response.headers()
													.set("content-type", "application/json")
													.setInt("content-length", BODY.length);
												ctx.writeAndFlush(response);
											}
										}
									});
					}
				})
				.bind(port)
				.sync();
		}
		System.out.println("bare " + args[0] + " server on port " + port);
		Thread.currentThread().join();
	}

}
