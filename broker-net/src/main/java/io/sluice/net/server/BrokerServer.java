package io.sluice.net.server;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
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
import io.sluice.core.Broker;
import io.sluice.core.SluiceException;
import io.sluice.net.internal.Transport;
import io.sluice.net.protocol.FrameDecoder;
import io.sluice.net.server.internal.ConnectionLimiter;
import io.sluice.net.server.internal.RequestHandler;
import io.sluice.net.server.internal.ServerContext;
import io.sluice.net.server.internal.ServerCounters;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * The binary-protocol server (see {@code docs/PROTOCOL.md}) in front of an embedded core {@link Broker}.
 *
 * <pre>{@code
 * try (Broker broker = Broker.open(BrokerConfig.builder(Path.of("data")).build());
 *      BrokerServer server = BrokerServer.start(broker, BrokerServerConfig.builder().port(7070).build())) {
 *     ...
 * }
 * }</pre>
 *
 * <p>Threads: a boss thread {@code sluice-broker-accept}, {@code ioThreads} event loops {@code sluice-broker-io-*}
 * (each connection lives on one), one {@code sluice-broker-admin} thread for topic administration and one
 * {@code sluice-broker-groups} thread for group calls and offset commits (so heartbeats never wait for a topic creation).
 *
 * <p>{@link #close()} stops accepting, lets every connection answer what it already received (cutting long-poll
 * fetches short), closes connections, and stops the threads; it does not close the core broker, which belongs to
 * the caller (close it afterwards: it drains what was accepted to the journal). Idempotent.
 */
public final class BrokerServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(BrokerServer.class);

    private final BrokerServerConfig config;
    private final Transport transport;
    private final EventLoopGroup bossGroup;
    private final EventLoopGroup ioGroup;
    private final ExecutorService admin;
    private final ExecutorService groups;
    private final ChannelGroup channels = new DefaultChannelGroup("sluice-broker-connections", GlobalEventExecutor.INSTANCE, true);
    private final ServerCounters counters = new ServerCounters();
    private final ServerContext context;
    private final Channel serverChannel;
    private boolean closed;

    private BrokerServer(Broker broker, BrokerServerConfig config) {
        this.config = config;
        this.transport = Transport.select(config.preferNativeTransport());
        this.admin = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "sluice-broker-admin");
            t.setDaemon(true);
            return t;
        });
        this.groups = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "sluice-broker-groups");
            t.setDaemon(true);
            return t;
        });
        this.context = new ServerContext(broker, config, counters, channels, admin, groups);
        this.bossGroup = transport.newGroup(1, "sluice-broker-accept");
        this.ioGroup = transport.newGroup(config.ioThreads(), "sluice-broker-io");
        ConnectionLimiter limiter = new ConnectionLimiter(context);
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
                        p.addLast("limit", limiter);
                        if (config.sslContext() != null) {
                            p.addLast("tls", config.sslContext().newHandler(ch.alloc()));
                        }
                        if (config.idleTimeoutMillis() > 0) {
                            p.addLast("idle", new IdleStateHandler(0, 0, config.idleTimeoutMillis(), TimeUnit.MILLISECONDS));
                        }
                        p.addLast("frames", FrameDecoder.forRequests(config.maxFrameSize()));
                        p.addLast("requests", new RequestHandler(context));
                    }
                });
        try {
            this.serverChannel = bootstrap.bind(config.bindAddress(), config.port()).syncUninterruptibly().channel();
        } catch (RuntimeException e) {
            shutdownThreads();
            context.close();
            throw new SluiceException(SluiceException.Code.INVALID_CONFIG,
                    "cannot listen on " + config.bindAddress() + ":" + config.port() + ": " + e.getMessage(), e);
        }
        if (!isLoopback(config.bindAddress()) && config.authToken() == null) {
            LOG.warn("listening on {} without authentication: any host that reaches this port can produce and consume",
                    config.bindAddress());
        }
        LOG.info("broker listening on {} ({} transport, {})", serverChannel.localAddress(), transport, config);
    }

    /** Binds and starts serving; fails with {@link SluiceException} if the address cannot be bound. */
    public static BrokerServer start(Broker broker, BrokerServerConfig config) {
        return new BrokerServer(broker, config);
    }

    public BrokerServerConfig config() {
        return config;
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

    public ServerStats stats() {
        return counters.snapshot();
    }

    /**
     * Registers the binary port's series ({@code sluice_binary_*}: connections, requests, errors, records) on
     * {@code registry}; close the handle to remove them.
     */
    public AutoCloseable registerMetrics(io.sluice.net.metrics.MetricsRegistry registry) {
        java.util.List<AutoCloseable> handles = java.util.List.of(
                registry.gauge("sluice_binary_connections_active", "Open connections on the binary port.", () -> stats().activeConnections()),
                registry.counter("sluice_binary_connections_accepted_total", "Connections accepted on the binary port.", () -> stats().acceptedConnections()),
                registry.counter("sluice_binary_connections_refused_total", "Connections closed at once because max.connections was reached.", () -> stats().refusedConnections()),
                registry.counter("sluice_binary_requests_total", "Requests started on the binary port.", () -> stats().requests()),
                registry.counter("sluice_binary_error_responses_total", "Requests answered with an error code.", () -> stats().errorResponses()),
                registry.counter("sluice_binary_protocol_errors_total", "Connections closed because their bytes broke framing.", () -> stats().protocolErrors()),
                registry.counter("sluice_binary_produced_records_total", "Records acknowledged to producers on the binary port.", () -> stats().producedRecords()),
                registry.counter("sluice_binary_fetched_records_total", "Records sent to fetchers on the binary port.", () -> stats().fetchedRecords()),
                registry.counter("sluice_binary_back_pressure_pauses_total", "Times a connection stopped being read because a partition ring was full.", () -> stats().backPressurePauses()),
                registry.gauge("sluice_binary_unauthenticated_connections", "Open binary connections that have not authenticated yet.", () -> stats().unauthenticatedConnections()),
                registry.counter("sluice_binary_unauthenticated_closes_total", "Connections closed before authenticating (frame over auth.max.frame.bytes, auth.timeout.ms, an API other than API_VERSIONS/AUTHENTICATE).", () -> stats().unauthenticatedCloses()),
                registry.counter("sluice_binary_unauthenticated_refused_total", "Connections closed at once because max.unauthenticated.connections was reached.", () -> stats().unauthenticatedRefused()),
                registry.counter("sluice_binary_internal_errors_total", "Requests answered UNKNOWN because an operation failed unexpectedly.", () -> stats().internalErrors()));
        return () -> {
            for (AutoCloseable h : handles) {
                h.close();
            }
        };
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
            RequestHandler handler = ch.pipeline().get(RequestHandler.class);
            if (handler != null) {
                ch.eventLoop().execute(handler::beginDrain);
            }
        }
        while (!channels.isEmpty() && System.nanoTime() < deadline) {
            channels.newCloseFuture().awaitUninterruptibly(10, TimeUnit.MILLISECONDS);
        }
        if (!channels.isEmpty()) {
            LOG.warn("closing {} connections that did not finish within shutdownTimeoutMillis={}", channels.size(),
                    config.shutdownTimeoutMillis());
            channels.close().awaitUninterruptibly();
        }
        shutdownThreads();
        context.close();
        LOG.info("broker server stopped: {}", counters.snapshot());
    }

    private void shutdownThreads() {
        bossGroup.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        ioGroup.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        admin.shutdown();
        groups.shutdown();
        try {
            if (!admin.awaitTermination(5, TimeUnit.SECONDS)) {
                LOG.warn("admin thread did not stop within 5 s");
            }
            if (!groups.awaitTermination(5, TimeUnit.SECONDS)) {
                LOG.warn("groups thread did not stop within 5 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static boolean isLoopback(String address) {
        return address.equals("127.0.0.1") || address.equals("localhost") || address.equals("::1") || address.startsWith("127.");
    }
}
