package dev.tokengap.config;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.HttpProtocol;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

import org.springframework.boot.reactor.netty.NettyReactiveWebServerFactory;
import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.boot.reactor.netty.NettyWebServer;
import org.springframework.boot.web.server.Shutdown;
import org.springframework.boot.web.server.Ssl;
import org.springframework.boot.web.server.WebServer;
import org.springframework.http.client.ReactorResourceFactory;
import org.springframework.http.server.reactive.HttpHandler;
import org.springframework.http.server.reactive.ReactorHttpHandlerAdapter;

import dev.tokengap.proxy.ProxyEventLoops;
import dev.tokengap.proxy.ProxyHandler;

/**
 * Spring Boot's Netty server factory, except that the proxy port hands Reactor Netty's
 * request and response straight to {@link ProxyHandler}: Spring's adapter would wrap both
 * in its own types for every request (a parse of the URI among them), which the proxy
 * unwraps again at once (2.7 % of the event loops' time at 2,000 requests/s,
 * docs/performance-data/cpu-rate2000-session9.txt, 2 December 2026). Spring Boot hands
 * the factory a handler that looks the application's up when the server starts, so the
 * proxy's is given to the factory the same way ({@link #proxyTo}). A factory without it,
 * such as the management port's (its child context builds one of this class), and a proxy
 * port with TLS, compression or HTTP/2 configured get Spring Boot's server unchanged. The
 * proxy port runs on {@link ProxyEventLoops}' own loops where it has them.
 * <p>
 * Either way a graceful shutdown is {@link DrainingWebServer}'s, not Spring Boot's, whose
 * stop can hang forever after a drain.
 */
public class ProxyWebServerFactory extends NettyReactiveWebServerFactory {

	private Supplier<ProxyHandler> proxy;

	private ProxyEventLoops loops;

	private ReactorResourceFactory resources;

	private Duration lifecycleTimeout;

	private boolean forwardHeaders;

	/**
	 * Makes this the proxy port's factory.
	 * @param proxy the application's handler, looked up when the first request comes
	 * @param loops the event loops the proxy port runs on
	 */
	void proxyTo(Supplier<ProxyHandler> proxy, ProxyEventLoops loops) {
		this.proxy = proxy;
		this.loops = loops;
	}

	@Override
	public WebServer getWebServer(HttpHandler httpHandler) {
		Shutdown shutdown = getShutdown();
		AtomicReference<DisposableServer> bound = new AtomicReference<>();
		WebServer server = (this.proxy == null || Ssl.isEnabled(getSsl())
				|| (getCompression() != null && getCompression().getEnabled())
				|| (getHttp2() != null && getHttp2().isEnabled())) ? bootServer(httpHandler, bound)
						: proxyServer(httpHandler, bound);
		return (shutdown == Shutdown.GRACEFUL) ? new DrainingWebServer(server, bound) : server;
	}

	/** Spring Boot's server, without its graceful shutdown, telling where it is bound. */
	private WebServer bootServer(HttpHandler httpHandler, AtomicReference<DisposableServer> bound) {
		Shutdown shutdown = getShutdown();
		NettyServerCustomizer binding = (server) -> server.doOnBound(bound::set);
		getServerCustomizers().add(binding);
		setShutdown(Shutdown.IMMEDIATE);
		try {
			return super.getWebServer(httpHandler);
		}
		finally {
			setShutdown(shutdown);
			getServerCustomizers().remove(binding);
		}
	}

	private WebServer proxyServer(HttpHandler httpHandler, AtomicReference<DisposableServer> bound) {
		HttpServer server = HttpServer.create()
			.bindAddress(this::listenAddress)
			.protocol(HttpProtocol.HTTP11)
			.forwarded(this.forwardHeaders);
		for (NettyServerCustomizer customizer : getServerCustomizers()) {
			server = customizer.apply(server);
		}
		// NettyWebServer runs the server on the resource factory's loops, if it has one
		boolean ownLoops = this.loops.deferred();
		if (ownLoops) {
			server = server.runOn(this.loops);
		}
		return new NettyWebServer(server.doOnBound(bound::set), new DirectAdapter(httpHandler, this.proxy),
				this.lifecycleTimeout, Shutdown.IMMEDIATE, ownLoops ? null : this.resources);
	}

	private InetSocketAddress listenAddress() {
		return (getAddress() != null) ? new InetSocketAddress(getAddress().getHostAddress(), getPort())
				: new InetSocketAddress(getPort());
	}

	@Override
	public void setResourceFactory(ReactorResourceFactory resourceFactory) {
		super.setResourceFactory(resourceFactory);
		this.resources = resourceFactory;
	}

	@Override
	public void setLifecycleTimeout(Duration lifecycleTimeout) {
		super.setLifecycleTimeout(lifecycleTimeout);
		this.lifecycleTimeout = lifecycleTimeout;
	}

	@Override
	public void setUseForwardHeaders(boolean useForwardHeaders) {
		super.setUseForwardHeaders(useForwardHeaders);
		this.forwardHeaders = useForwardHeaders;
	}

	/** The proxy's handler, called with Reactor Netty's own request and response. */
	private static final class DirectAdapter extends ReactorHttpHandlerAdapter {

		private final Supplier<ProxyHandler> lookup;

		private volatile ProxyHandler proxy;

		DirectAdapter(HttpHandler httpHandler, Supplier<ProxyHandler> lookup) {
			super(httpHandler);
			this.lookup = lookup;
		}

		@Override
		public Mono<Void> apply(HttpServerRequest request, HttpServerResponse response) {
			ProxyHandler handler = this.proxy;
			if (handler == null) {
				handler = this.lookup.get();
				this.proxy = handler;
			}
			return handler.handle(request, response);
		}

	}

}
