package io.sluice.net.server.internal;

import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Enforces {@code maxConnections}: a connection over the bound is closed at once with a logged reason. */
@ChannelHandler.Sharable
public final class ConnectionLimiter extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(ConnectionLimiter.class);
    private final ServerContext server;

    public ConnectionLimiter(ServerContext server) {
        this.server = server;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        int open = server.counters.activeConnections.incrementAndGet();
        if (open > server.config.maxConnections()) {
            server.counters.activeConnections.decrementAndGet();
            server.counters.refusedConnections.increment();
            LOG.warn("refusing connection from {}: maxConnections={} reached", ctx.channel().remoteAddress(),
                    server.config.maxConnections());
            ctx.pipeline().remove(this);
            ctx.close();
            return;
        }
        server.counters.acceptedConnections.increment();
        server.channels.add(ctx.channel());
        super.channelActive(ctx);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        server.counters.activeConnections.decrementAndGet();
        super.channelInactive(ctx);
    }
}
