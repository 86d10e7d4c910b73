package dev.tokengap.proxy;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.AttributeKey;

/**
 * Holds client requests to the strict reading of RFC 9112 that a proxy needs. It sits
 * between Reactor Netty's traffic handler and the application (placed there with
 * {@code Connection#addHandlerLast}), so it sees each request and each piece of its body
 * before the proxy does:
 * <ul>
 * <li>an absolute-form target ({@code GET http://host/path}) is reduced to its path and
 * query: the engine is the only place a request can go, whatever authority it names;</li>
 * <li>a body whose chunked framing breaks part-way never reaches it: Reactor Netty
 * answers 400 and closes, but ends the request's body as if it were complete, so the end
 * of each body is noted here and {@link #bodyFailed(Channel)} keeps a body that ended
 * without it from being forwarded.</li>
 * </ul>
 * A {@code Transfer-Encoding} other than exactly one {@code chunked} is refused by
 * {@link ProxyHandler} ({@link #framingProblem}), before anything of the request is read.
 */
public final class StrictRequestHandler extends ChannelInboundHandlerAdapter {

	/** Name in the pipeline. */
	public static final String NAME = "tokengap.strictRequest";

	private static final AttributeKey<StrictRequestHandler> HANDLER = AttributeKey.valueOf("tokengap.strictRequest");

	/** The current request's headers have come and the end of its body has not. */
	private boolean bodyOpen;

	/**
	 * Whether the current request's body ended without its last piece: Reactor Netty
	 * ended it because its framing broke (or the connection's exchange ended before it).
	 * @param channel the client channel
	 * @return true when the body read so far is not the whole body
	 */
	static boolean bodyFailed(Channel channel) {
		StrictRequestHandler handler = channel.attr(HANDLER).get();
		return handler != null && handler.bodyOpen;
	}

	/**
	 * What makes a request's body length unknowable (RFC 9112 section 6.3): a
	 * {@code Transfer-Encoding} other than exactly one {@code chunked}, such as
	 * {@code xchunked}, {@code chunked, identity} or the header twice.
	 * @param headers the request's headers
	 * @return the problem, or null when the framing is clear
	 */
	static String framingProblem(HttpHeaders headers) {
		if (!headers.contains(HttpHeaderNames.TRANSFER_ENCODING)) {
			return null;
		}
		var codings = headers.getAll(HttpHeaderNames.TRANSFER_ENCODING);
		if (codings.size() == 1 && "chunked".equalsIgnoreCase(codings.get(0).trim())) {
			return null;
		}
		return "Transfer-Encoding must be exactly 'chunked' (RFC 9112 section 6.3), got " + codings;
	}

	@Override
	public void handlerAdded(ChannelHandlerContext ctx) {
		ctx.channel().attr(HANDLER).set(this);
	}

	@Override
	public void channelRead(ChannelHandlerContext ctx, Object msg) {
		if (msg instanceof HttpRequest request) {
			this.bodyOpen = true;
			String uri = request.uri();
			if (isAbsoluteForm(uri)) {
				request.setUri(pathAndQuery(uri));
			}
		}
		if (msg instanceof LastHttpContent) {
			this.bodyOpen = false;
		}
		ctx.fireChannelRead(msg);
	}

	private static boolean isAbsoluteForm(String uri) {
		return uri.regionMatches(true, 0, "http://", 0, 7) || uri.regionMatches(true, 0, "https://", 0, 8);
	}

	private static String pathAndQuery(String uri) {
		int authority = uri.indexOf("//") + 2;
		int end = authority;
		while (end < uri.length() && "/?#".indexOf(uri.charAt(end)) < 0) {
			end++;
		}
		String rest = uri.substring(end);
		return rest.startsWith("/") ? rest : "/" + rest;
	}

}
