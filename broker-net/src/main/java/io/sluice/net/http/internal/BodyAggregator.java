package io.sluice.net.http.internal;

import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.sluice.core.SluiceException;

/**
 * {@link HttpObjectAggregator} bounded by {@code http.max.body.bytes}. An oversized request is answered {@code 413}
 * with a JSON reason and the connection is always closed: the rest of the body is never read into memory, and the
 * connection cannot be reused without reading it.
 */
public final class BodyAggregator extends HttpObjectAggregator {
    private final HttpMetrics metrics;
    private final int maxBodyBytes;

    public BodyAggregator(int maxBodyBytes, HttpMetrics metrics) {
        super(maxBodyBytes);
        this.maxBodyBytes = maxBodyBytes;
        this.metrics = metrics;
    }

    @Override
    protected void handleOversizedMessage(ChannelHandlerContext ctx, HttpMessage oversized) {
        metrics.request("oversized", 413);
        FullHttpResponse response = JsonResponses.error(ctx.alloc(), HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE,
                SluiceException.Code.RECORD_TOO_LARGE, "request body larger than " + maxBodyBytes + " bytes (http.max.body.bytes)");
        response.headers().set(HttpHeaderNames.CONTENT_LENGTH, response.content().readableBytes());
        response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
    }
}
