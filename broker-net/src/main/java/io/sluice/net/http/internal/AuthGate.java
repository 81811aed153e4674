package io.sluice.net.http.internal;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import io.sluice.net.security.TokenAuthenticator;

/**
 * Checks the token on a request's headers, right after the HTTP codec and before the body is inflated or aggregated:
 * <pre>
 *   codec ──► AuthGate ──► inflate ──► aggregate (http.max.body.bytes) ──► API
 * </pre>
 * A request without a valid token (other than {@code GET /health}) never reaches the inflater or the aggregator: the
 * gate passes on its head alone, with an empty body and {@link #REFUSED} set, so the API handler answers it
 * {@code 401} in its turn (pipelined requests keep their order) and closes the connection; the gate drops the
 * request's body as it arrives and stops reading the socket. An unauthenticated client therefore makes the server
 * hold at most one request head ({@code HttpServerCodec}'s limits) plus one socket read.
 *
 * <p>Also tells the {@link ConnectionGuard} when a request's head arrived (header deadline) and when the connection
 * presented a valid token (it stops counting as unauthenticated). Event loop only.
 */
public final class AuthGate extends ChannelInboundHandlerAdapter {
    /** Header set on a request refused by the gate (never sent by a client: the gate removes it from requests). */
    public static final String REFUSED = "x-sluice-unauthenticated";

    private final TokenAuthenticator auth;
    private final ConnectionGuard guard;
    /** Dropping the body of a refused request. */
    private boolean discarding;

    /** @param auth the token to require, or null for none (then only the guard is told about request heads) */
    public AuthGate(TokenAuthenticator auth, ConnectionGuard guard) {
        this.auth = auth;
        this.guard = guard;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
        if (discarding) {
            boolean last = msg instanceof LastHttpContent;
            ReferenceCountUtil.release(msg);
            if (last) {
                discarding = false;
            }
            return;
        }
        if (!(msg instanceof HttpRequest request)) {
            ctx.fireChannelRead(msg);
            return;
        }
        guard.headersReceived(ctx);
        request.headers().remove(REFUSED);
        if (auth == null || !request.decoderResult().isSuccess() || isHealth(request.uri())
                || auth.authenticateBearer(request.headers().get(HttpHeaderNames.AUTHORIZATION))) {
            if (auth != null && request.decoderResult().isSuccess() && !isHealth(request.uri())) {
                guard.authenticated();
            }
            ctx.fireChannelRead(msg);
            return;
        }
        // refused: pass on the head only, so the 401 is answered in order; drop the body; read no more
        FullHttpRequest head = new DefaultFullHttpRequest(request.protocolVersion(), request.method(), request.uri());
        head.headers().set(request.headers());
        head.headers().remove(HttpHeaderNames.CONTENT_ENCODING);
        head.headers().remove(HttpHeaderNames.TRANSFER_ENCODING);
        head.headers().remove(HttpHeaderNames.EXPECT);
        head.headers().set(HttpHeaderNames.CONTENT_LENGTH, 0);
        head.headers().set(REFUSED, "true");
        boolean complete = msg instanceof LastHttpContent;
        ReferenceCountUtil.release(msg);
        discarding = !complete;
        ctx.channel().config().setAutoRead(false);
        ctx.fireChannelRead(head);
    }

    /** {@code /health} (any query) is open without a token; compared on the raw path, without decoding. */
    private static boolean isHealth(String uri) {
        int query = uri.indexOf('?');
        return (query < 0 ? uri : uri.substring(0, query)).equals("/health");
    }
}
