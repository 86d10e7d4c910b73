package dev.tokengap.config;

import java.util.function.Predicate;
import java.util.function.Supplier;

import org.reactivestreams.Publisher;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.http.server.HttpServerRoutes;

import org.springframework.boot.reactor.netty.NettyRouteProvider;

import dev.tokengap.proxy.ProxyHandler;

/**
 * The proxy port's one route: every request, whatever its method and path, goes to
 * {@link ProxyHandler} with Reactor Netty's own request and response. Spring Boot's
 * server applies route providers before the application's handler, which this route
 * leaves unreached; Spring's adapter would wrap both in its own types for every request
 * (a parse of the URI among them), which the proxy unwraps again at once (2.7 % of the
 * event loops' time at 2,000 requests/s, docs/performance-data/cpu-rate2000-c217c72.txt,
 * 2 December 2026). A route costs Reactor Netty an iterator and one predicate test per
 * request. Only the application's context has route providers: the management port's
 * child context builds its server without them.
 */
final class ProxyRoute implements NettyRouteProvider {

	private static final Predicate<HttpServerRequest> EVERY_REQUEST = (request) -> true;

	private final Supplier<ProxyHandler> lookup;

	private volatile ProxyHandler proxy;

	/**
	 * @param lookup the application's handler, looked up when the first request comes
	 */
	ProxyRoute(Supplier<ProxyHandler> lookup) {
		this.lookup = lookup;
	}

	@Override
	public HttpServerRoutes apply(HttpServerRoutes routes) {
		return routes.route(EVERY_REQUEST, this::handle);
	}

	private Publisher<Void> handle(HttpServerRequest request, HttpServerResponse response) {
		ProxyHandler handler = this.proxy;
		if (handler == null) {
			handler = this.lookup.get();
			this.proxy = handler;
		}
		return handler.handle(request, response);
	}

}
