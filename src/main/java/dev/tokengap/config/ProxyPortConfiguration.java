package dev.tokengap.config;

import java.util.Arrays;

import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import reactor.netty.Connection;
import reactor.netty.http.HttpProtocol;
import reactor.netty.http.server.HttpServer;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.reactor.netty.NettyReactiveWebServerFactory;
import org.springframework.boot.reactor.netty.NettyRouteProvider;
import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.util.unit.DataSize;

import dev.tokengap.proxy.ProxyEventLoops;
import dev.tokengap.proxy.ProxyHandler;
import dev.tokengap.proxy.ProxyProperties;
import dev.tokengap.proxy.RequestTimeoutHandler;
import dev.tokengap.proxy.ResponseHeadFlush;
import dev.tokengap.proxy.StrictRequestHandler;

/**
 * The proxy port: Spring Boot's own Netty server, built by its auto-configured factory
 * from {@code server.*} as any WebFlux application's, and made the proxy's through Spring
 * Boot's public extension points only: a route that hands every request to
 * {@link ProxyHandler} ({@link ProxyRoute}), server customizers for the connections and
 * the event loops, and a factory customizer. Its graceful shutdown is
 * {@link ServerDrain}'s. These beans live in the application's context only, so the
 * management port, which Spring Boot builds in a child context of its own, keeps a plain
 * WebFlux server.
 * <p>
 * Spring Boot's server rather than a Reactor Netty {@code HttpServer} of tokengap's own
 * started in a lifecycle: every {@code server.*} property (port, address, TLS,
 * compression, HTTP/2, forwarded headers, {@code server.netty.*}), the port's
 * {@code WebServerInitializedEvent} and {@code local.server.port}, and the management
 * port's child context keep working as Spring Boot documents them, with nothing of them
 * re-implemented here.
 * <p>
 * A client connection's pipeline, head to tail:
 *
 * <pre>
 *  Reactor Netty's      codec ─ HttpTrafficHandler (makes each request's operations)
 *  tokengap's           ─ RequestTimeoutHandler ─ StrictRequestHandler ─ ResponseHeadFlush
 *  Reactor Netty's      ─ bridge to the application ─▶ ProxyRoute ─▶ ProxyHandler
 * </pre>
 */
@Configuration(proxyBeanMethods = false)
@Conditional(ProxyModeCondition.class)
class ProxyPortConfiguration {

	@Bean
	NettyRouteProvider proxyRoute(ObjectProvider<ProxyHandler> proxy) {
		return new ProxyRoute(proxy::getObject);
	}

	/**
	 * The proxy port's client connections: tokengap's handlers for HTTP/1.1, placed by
	 * Reactor Netty's public {@link Connection#addHandlerLast}, between its traffic
	 * handler (which makes each request's operations) and its bridge to the application
	 * (which calls the route): they see every request, body piece and response end the
	 * application does, before it does. A port with HTTP/2 configured keeps Reactor
	 * Netty's request timeout instead, and none of these handlers: its streams are framed
	 * by HTTP/2, and its connections carry frames, not requests (its HTTP/1.1 connections
	 * then go without the absolute-form rewrite and the broken-body check).
	 * @param proxy the inbound settings
	 * @return the customizer
	 */
	@Bean
	NettyServerCustomizer clientConnections(ProxyProperties proxy) {
		DataSize size = proxy.clientSendBuffer();
		return (server) -> {
			HttpServer limited = http2(server) ? server.requestTimeout(proxy.requestTimeout())
					: server.doOnChannelInit((observer, channel, address) -> addHandlers(channel, proxy));
			return (size != null) ? limited.childOption(ChannelOption.SO_SNDBUF, (int) size.toBytes()) : limited;
		};
	}

	private static boolean http2(HttpServer server) {
		return Arrays.stream(server.configuration().protocols())
			.anyMatch((protocol) -> protocol == HttpProtocol.H2 || protocol == HttpProtocol.H2C);
	}

	private static void addHandlers(Channel channel, ProxyProperties proxy) {
		Connection.from(channel)
			.addHandlerLast(RequestTimeoutHandler.NAME, new RequestTimeoutHandler(proxy.requestTimeout()))
			.addHandlerLast(StrictRequestHandler.NAME, new StrictRequestHandler())
			.addHandlerLast(ResponseHeadFlush.NAME, new ResponseHeadFlush());
	}

	/**
	 * The proxy port runs on {@link ProxyEventLoops}' own loops where it has them. Spring
	 * Boot's server runs on its resource factory's loops when the factory has one, after
	 * the customizers, so the factory is left without it then.
	 * @param loops the proxy port's loops
	 * @return the customizer
	 */
	@Bean
	WebServerFactoryCustomizer<NettyReactiveWebServerFactory> proxyPortLoops(ProxyEventLoops loops) {
		return (factory) -> {
			if (loops.deferred()) {
				factory.setResourceFactory(null);
				factory.addServerCustomizers((server) -> server.runOn(loops));
			}
		};
	}

}
