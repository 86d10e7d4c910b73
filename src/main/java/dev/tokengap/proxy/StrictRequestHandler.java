package dev.tokengap.proxy;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.util.AttributeKey;
import io.netty.util.ReferenceCountUtil;

/**
 * Holds client requests to the strict reading of RFC 9112 that a proxy needs, right after
 * the HTTP decoder and before Reactor Netty sees them:
 * <ul>
 * <li>a {@code Transfer-Encoding} other than exactly one {@code chunked} (such as
 * {@code xchunked}, {@code chunked, identity} or the header twice) leaves the body length
 * unknowable (section 6.3): the request is failed as undecodable, so Reactor Netty
 * answers 400 and closes, and nothing after it on the connection is read as a
 * request;</li>
 * <li>a body whose chunked framing breaks part-way is marked on the channel, because
 * Reactor Netty then ends the request's body as if it were complete;
 * {@link #bodyFailed(Channel)} keeps the truncated body from being forwarded;</li>
 * <li>an absolute-form target ({@code GET http://host/path}) is reduced to its path and
 * query: the engine is the only place a request can go, whatever authority it names.</li>
 * </ul>
 */
public final class StrictRequestHandler extends ChannelInboundHandlerAdapter {

	/** Name in the pipeline. */
	public static final String NAME = "tokengap.strictRequest";

	private static final AttributeKey<Boolean> BODY_FAILED = AttributeKey.valueOf("tokengap.bodyFailed");

	private boolean refused;

	/**
	 * Whether the current request's body failed to decode after its headers were
	 * accepted.
	 * @param channel the client channel
	 * @return true when the body read so far is not the whole body
	 */
	static boolean bodyFailed(Channel channel) {
		return Boolean.TRUE.equals(channel.attr(BODY_FAILED).get());
	}

	@Override
	public void channelRead(ChannelHandlerContext ctx, Object msg) {
		if (this.refused) {
			// The framing of the refused request is unknown:
			// whatever follows is not a request.
			ReferenceCountUtil.release(msg);
			return;
		}
		if (msg instanceof HttpRequest request && request.decoderResult().isSuccess()) {
			ctx.channel().attr(BODY_FAILED).set(null);
			check(request);
		}
		else if (msg instanceof HttpContent content && content.decoderResult().isFailure()) {
			ctx.channel().attr(BODY_FAILED).set(Boolean.TRUE);
		}
		if (msg instanceof HttpObject object && object.decoderResult().isFailure()) {
			this.refused = true;
		}
		ctx.fireChannelRead(msg);
	}

	private static void check(HttpRequest request) {
		String problem = transferEncodingProblem(request);
		if (problem != null) {
			request.setDecoderResult(DecoderResult.failure(new IllegalArgumentException(problem)));
			return;
		}
		String uri = request.uri();
		if (isAbsoluteForm(uri)) {
			request.setUri(pathAndQuery(uri));
		}
	}

	private static String transferEncodingProblem(HttpRequest request) {
		if (!request.headers().contains(HttpHeaderNames.TRANSFER_ENCODING)) {
			return null;
		}
		var codings = request.headers().getAll(HttpHeaderNames.TRANSFER_ENCODING);
		if (codings.size() == 1 && "chunked".equalsIgnoreCase(codings.get(0).trim())) {
			return null;
		}
		return "Transfer-Encoding must be exactly 'chunked' (RFC 9112 section 6.3), got " + codings;
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
