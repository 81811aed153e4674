package io.sluice.kafka;

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
import io.sluice.core.Broker;
import io.sluice.core.SluiceException;
import io.sluice.kafka.internal.KafkaApis;
import io.sluice.kafka.internal.KafkaConnection;
import io.sluice.kafka.internal.KafkaCounters;
import io.sluice.kafka.internal.ListenerContext;
import io.sluice.net.internal.Transport;
import io.sluice.net.protocol.FrameDecoder;
import io.sluice.net.server.BrokerServerConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * The Kafka wire-protocol listener in front of an embedded core {@link Broker}: Kafka clients produce to and fetch
 * from the broker's topics (docs/kafka.md lists the APIs and versions).
 *
 * <pre>{@code
 * try (Broker broker = Broker.open(BrokerConfig.builder(Path.of("data")).build());
 *      KafkaListener kafka = KafkaListener.start(broker, KafkaListenerConfig.of(9092, BrokerServerConfig.builder().build()))) {
 *     ...
 * }
 * }</pre>
 *
 * <p>Threads: a boss thread {@code sluice-kafka-accept}, {@code io.threads} event loops {@code sluice-kafka-io-*}
 * (each connection lives on one) and one {@code sluice-kafka-admin} thread for calls that touch files (topic
 * creation). The frame, connection and pre-authentication bounds, the token and TLS are the binary port's.
 *
 * <p>{@link #close()} stops accepting, lets every connection answer what it already received (cutting long-poll
 * fetches short), closes connections and stops the threads; it does not close the core broker, which belongs to the
 * caller. Idempotent.
 */
public final class KafkaListener implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(KafkaListener.class);

    private final KafkaListenerConfig config;
    private final EventLoopGroup bossGroup;
    private final EventLoopGroup ioGroup;
    private final ExecutorService admin;
    private final ChannelGroup channels = new DefaultChannelGroup("sluice-kafka-connections", GlobalEventExecutor.INSTANCE, true);
    private final KafkaCounters counters = new KafkaCounters();
    private final ListenerContext context;
    private final Channel serverChannel;
    private boolean closed;

    private KafkaListener(Broker broker, KafkaListenerConfig config) {
        this.config = config;
        BrokerServerConfig server = config.server();
        Transport transport = Transport.select(server.preferNativeTransport());
        this.admin = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "sluice-kafka-admin");
            t.setDaemon(true);
            return t;
        });
        this.context = new ListenerContext(broker, config, counters, channels, admin, advertisedHost(config));
        context.apis(KafkaApis.standard(context));
        this.bossGroup = transport.newGroup(1, "sluice-kafka-accept");
        this.ioGroup = transport.newGroup(server.ioThreads(), "sluice-kafka-io");
        ConnectionBound bound = new ConnectionBound();
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
                        p.addLast("limit", bound);
                        if (server.sslContext() != null) {
                            p.addLast("tls", server.sslContext().newHandler(ch.alloc()));
                        }
                        if (server.idleTimeoutMillis() > 0) {
                            p.addLast("idle", new IdleStateHandler(0, 0, server.idleTimeoutMillis(), TimeUnit.MILLISECONDS));
                        }
                        // Kafka's framing is the binary port's: an int32 length, then the request (8-byte fixed header)
                        p.addLast("frames", FrameDecoder.forRequests(server.maxFrameSize()));
                        p.addLast("requests", new KafkaConnection(context));
                    }
                });
        try {
            this.serverChannel = bootstrap.bind(server.bindAddress(), config.port()).syncUninterruptibly().channel();
        } catch (RuntimeException e) {
            shutdownThreads();
            throw new SluiceException(SluiceException.Code.INVALID_CONFIG,
                    "cannot listen for Kafka clients on " + server.bindAddress() + ":" + config.port() + ": " + e.getMessage(), e);
        }
        context.advertisedPort(port());
        LOG.info("Kafka listener on {} ({} transport), advertised as {}:{}, cluster id {}, node {}",
                serverChannel.localAddress(), transport, context.advertisedHost(), context.advertisedPort(),
                context.clusterId(), context.nodeId());
    }

    /** Binds and starts serving; fails with {@link SluiceException} if the address cannot be bound. */
    public static KafkaListener start(Broker broker, KafkaListenerConfig config) {
        return new KafkaListener(broker, config);
    }

    public KafkaListenerConfig config() {
        return config;
    }

    public InetSocketAddress localAddress() {
        return (InetSocketAddress) serverChannel.localAddress();
    }

    /** The bound port (useful with port 0). */
    public int port() {
        return localAddress().getPort();
    }

    /** The host:port Metadata sends clients to. */
    public String advertisedAddress() {
        return context.advertisedHost() + ":" + context.advertisedPort();
    }

    /** The Kafka cluster id of the broker's data directory (stable across restarts). */
    public String clusterId() {
        return context.clusterId();
    }

    /**
     * Registers the listener's series ({@code sluice_kafka_*}) on {@code registry}; close the handle to remove them.
     */
    public AutoCloseable registerMetrics(io.sluice.net.metrics.MetricsRegistry registry) {
        java.util.List<AutoCloseable> handles = java.util.List.of(
                registry.gauge("sluice_kafka_connections_active", "Open connections on the Kafka port.", counters.activeConnections::get),
                registry.counter("sluice_kafka_connections_accepted_total", "Connections accepted on the Kafka port.", counters.acceptedConnections::sum),
                registry.counter("sluice_kafka_connections_refused_total", "Kafka connections closed at once because max.connections was reached.", counters.refusedConnections::sum),
                registry.counter("sluice_kafka_requests_total", "Requests started on the Kafka port.", counters.requests::sum),
                registry.counter("sluice_kafka_error_responses_total", "Kafka requests answered with an error.", counters.errorResponses::sum),
                registry.counter("sluice_kafka_protocol_errors_total", "Kafka connections closed because their bytes broke the protocol.", counters.protocolErrors::sum),
                registry.counter("sluice_kafka_produced_records_total", "Records acknowledged to Kafka producers.", counters.producedRecords::sum),
                registry.counter("sluice_kafka_back_pressure_pauses_total", "Times a Kafka connection stopped being read because a partition ring was full.", counters.backPressurePauses::sum),
                registry.counter("sluice_kafka_unauthenticated_closes_total", "Kafka connections closed before authenticating.", counters.unauthenticatedCloses::sum),
                registry.counter("sluice_kafka_internal_errors_total", "Kafka requests answered with an error because an operation failed unexpectedly.", counters.internalErrors::sum));
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
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(config.server().shutdownTimeoutMillis());
        serverChannel.close().syncUninterruptibly();
        for (Channel ch : channels) {
            KafkaConnection connection = ch.pipeline().get(KafkaConnection.class);
            if (connection != null) {
                ch.eventLoop().execute(connection::beginDrain);
            }
        }
        while (!channels.isEmpty() && System.nanoTime() < deadline) {
            channels.newCloseFuture().awaitUninterruptibly(10, TimeUnit.MILLISECONDS);
        }
        if (!channels.isEmpty()) {
            LOG.warn("closing {} Kafka connections that did not finish within shutdown.timeout.ms={}", channels.size(),
                    config.server().shutdownTimeoutMillis());
            channels.close().awaitUninterruptibly();
        }
        shutdownThreads();
        LOG.info("Kafka listener stopped");
    }

    private void shutdownThreads() {
        if (bossGroup != null) {
            bossGroup.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
        if (ioGroup != null) {
            ioGroup.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
        admin.shutdown();
        try {
            if (!admin.awaitTermination(5, TimeUnit.SECONDS)) {
                LOG.warn("sluice-kafka-admin did not stop within 5 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The configured advertised host, else the bind address, else (wildcard bind) this machine's host name. */
    private static String advertisedHost(KafkaListenerConfig config) {
        if (config.advertisedHost() != null) {
            return config.advertisedHost();
        }
        String bind = config.server().bindAddress();
        if (bind.equals("0.0.0.0") || bind.equals("::") || bind.equals("[::]")) {
            try {
                return InetAddress.getLocalHost().getCanonicalHostName();
            } catch (UnknownHostException e) {
                throw new SluiceException(SluiceException.Code.INVALID_CONFIG, "bound to " + bind + " and this host's name "
                        + "cannot be resolved: set " + KafkaListenerConfig.ADVERTISED_HOST, e);
            }
        }
        return bind;
    }

    /** Enforces {@code max.connections} on the Kafka port: a connection over the bound is closed at once, logged. */
    @ChannelHandler.Sharable
    private final class ConnectionBound extends ChannelInboundHandlerAdapter {
        @Override
        public void channelActive(ChannelHandlerContext ctx) throws Exception {
            int open = counters.activeConnections.incrementAndGet();
            if (open > config.server().maxConnections()) {
                counters.activeConnections.decrementAndGet();
                counters.refusedConnections.increment();
                LOG.warn("refusing Kafka connection from {}: max.connections={} reached", ctx.channel().remoteAddress(),
                        config.server().maxConnections());
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
