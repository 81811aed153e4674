package io.sluice.net.server.pipeline;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.sluice.core.SluiceException;
import io.sluice.net.internal.Transport;
import io.sluice.net.protocol.FrameDecoder;
import io.sluice.net.server.BrokerServerConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * A listening socket whose connections are {@link PipelinedConnection}s: the accept thread {@code sluice-<name>-accept},
 * {@code io.threads} event loops {@code sluice-<name>-io-*}, and per connection the pipeline
 * {@code max.connections} bound → TLS (when configured) → {@code idle.timeout.ms} → int32-length framing
 * ({@code max.frame.size}) → the connection. Sluice's binary port and its Kafka listener are each one of these.
 *
 * <p>{@link #close()} stops accepting, lets every connection answer what it already received (long-polls at once),
 * waits up to {@code shutdown.timeout.ms}, closes what is left and stops the threads. Idempotent.
 */
public final class FramedListener implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(FramedListener.class);

    private final String label;
    private final BrokerServerConfig config;
    private final ConnectionCounters counters;
    private final Transport transport;
    private final EventLoopGroup bossGroup;
    private final EventLoopGroup ioGroup;
    private final ChannelGroup channels;
    private final Channel serverChannel;
    private boolean closed;

    private FramedListener(String name, String label, BrokerServerConfig config, int port, ConnectionCounters counters,
                           Supplier<? extends PipelinedConnection> connections) {
        this.label = label;
        this.config = config;
        this.counters = counters;
        this.transport = Transport.select(config.preferNativeTransport());
        this.channels = new DefaultChannelGroup("sluice-" + name + "-connections", GlobalEventExecutor.INSTANCE, true);
        this.bossGroup = transport.newGroup(1, "sluice-" + name + "-accept");
        this.ioGroup = transport.newGroup(config.ioThreads(), "sluice-" + name + "-io");
        ConnectionLimit limit = new ConnectionLimit();
        ServerBootstrap bootstrap = new ServerBootstrap()
                .group(bossGroup, ioGroup)
                .channel(transport.serverChannel())
                .option(ChannelOption.SO_BACKLOG, 1024)
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(256 << 10, 1 << 20))
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ChannelPipeline p = ch.pipeline();
                        p.addLast("limit", limit);
                        if (config.sslContext() != null) {
                            p.addLast("tls", config.sslContext().newHandler(ch.alloc()));
                        }
                        if (config.idleTimeoutMillis() > 0) {
                            p.addLast("idle", new IdleStateHandler(0, 0, config.idleTimeoutMillis(), TimeUnit.MILLISECONDS));
                        }
                        p.addLast("frames", FrameDecoder.forRequests(config.maxFrameSize()));
                        p.addLast("requests", connections.get());
                    }
                });
        try {
            this.serverChannel = bootstrap.bind(config.bindAddress(), port).syncUninterruptibly().channel();
        } catch (RuntimeException e) {
            shutdownThreads();
            throw new SluiceException(SluiceException.Code.INVALID_CONFIG, "cannot listen for " + label + "s on "
                    + config.bindAddress() + ":" + port + ": " + e.getMessage(), e);
        }
    }

    /**
     * Binds {@code config.bindAddress()}:{@code port} and starts accepting; fails with {@link SluiceException}
     * ({@code INVALID_CONFIG}) if the address cannot be bound, with no thread left running.
     *
     * @param name        names the threads and the channel group ({@code sluice-<name>-...})
     * @param label       how logs name one connection ("connection", "Kafka connection")
     * @param connections makes the handler of each new connection
     */
    public static FramedListener bind(String name, String label, BrokerServerConfig config, int port,
                                      ConnectionCounters counters, Supplier<? extends PipelinedConnection> connections) {
        return new FramedListener(name, label, config, port, counters, connections);
    }

    public InetSocketAddress localAddress() {
        return (InetSocketAddress) serverChannel.localAddress();
    }

    /** The bound port (useful with port 0). */
    public int port() {
        return localAddress().getPort();
    }

    /** The transport in use: EPOLL or NIO. */
    public String transport() {
        return transport.name();
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(config.shutdownTimeoutMillis());
        serverChannel.close().syncUninterruptibly();
        for (Channel ch : channels) {
            PipelinedConnection connection = ch.pipeline().get(PipelinedConnection.class);
            if (connection != null) {
                ch.eventLoop().execute(connection::beginDrain);
            }
        }
        while (!channels.isEmpty() && System.nanoTime() < deadline) {
            channels.newCloseFuture().awaitUninterruptibly(10, TimeUnit.MILLISECONDS);
        }
        if (!channels.isEmpty()) {
            LOG.warn("closing {} {}s that did not finish within {}={}", channels.size(), label,
                    BrokerServerConfig.SHUTDOWN_TIMEOUT_MS, config.shutdownTimeoutMillis());
            channels.close().awaitUninterruptibly();
        }
        shutdownThreads();
    }

    private void shutdownThreads() {
        bossGroup.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        ioGroup.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    /** Enforces {@code max.connections}: a connection over the bound is closed at once, logged and counted. */
    @ChannelHandler.Sharable
    private final class ConnectionLimit extends ChannelInboundHandlerAdapter {
        @Override
        public void channelActive(ChannelHandlerContext ctx) throws Exception {
            int open = counters.activeConnections.incrementAndGet();
            if (open > config.maxConnections()) {
                counters.activeConnections.decrementAndGet();
                counters.refusedConnections.increment();
                long refused = counters.refusedConnections.sum();
                if (Long.bitCount(refused) == 1) { // 1st, 2nd, 4th...: a connection storm cannot flood the log
                    LOG.warn("refusing {} from {}: {}={} reached; {} refused so far", label, ctx.channel().remoteAddress(),
                            BrokerServerConfig.MAX_CONNECTIONS, config.maxConnections(), refused);
                }
                ctx.pipeline().remove(this);
                ctx.close();
                return;
            }
            counters.acceptedConnections.increment();
            channels.add(ctx.channel());
            super.channelActive(ctx);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) throws Exception {
            counters.activeConnections.decrementAndGet();
            super.channelInactive(ctx);
        }
    }
}
