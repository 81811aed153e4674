package io.sluice.net.http;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.HttpContentDecompressor;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.ssl.SslContext;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.sluice.core.Broker;
import io.sluice.core.SluiceException;
import io.sluice.net.http.internal.AuthGate;
import io.sluice.net.http.internal.BodyAggregator;
import io.sluice.net.http.internal.ConnectionGuard;
import io.sluice.net.http.internal.HttpApi;
import io.sluice.net.http.internal.HttpApiHandler;
import io.sluice.net.http.internal.HttpCollector;
import io.sluice.net.http.internal.HttpMetrics;
import io.sluice.net.metrics.BrokerCollector;
import io.sluice.net.metrics.MetricsRegistry;
import io.sluice.net.security.BindCheck;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The HTTP/1.1 API of a Sluice broker on its own port: NDJSON ingest, topic admin, health and Prometheus metrics,
 * served by Netty over an embedded {@link Broker} (native epoll when available, NIO otherwise).
 *
 * <pre>{@code
 * try (Broker broker = Broker.open(BrokerConfig.builder(Path.of("data")).build());
 *      HttpApiServer http = new HttpApiServer(HttpApiConfig.DEFAULT, broker)) {
 *     ...   // curl -XPOST --data-binary @events.ndjson localhost:8080/v1/topics/orders/events
 * }
 * }</pre>
 *
 * <p>The constructor binds and starts serving; it fails with {@link SluiceException} if the port cannot be bound
 * or the TLS material cannot be loaded. The server does not own the broker: {@link #close()} stops accepting,
 * closes the connections, waits for the acknowledgements of accepted events (the producers' flush) and stops its
 * threads ({@code sluice-http-accept-*}, {@code sluice-http-io-*}); the caller closes the broker afterwards.
 * Endpoints, limits and error codes are described in {@code docs/http.md}.
 */
public final class HttpApiServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(HttpApiServer.class);
    private static final long SHUTDOWN_QUIET_MILLIS = 0;
    private static final long SHUTDOWN_TIMEOUT_MILLIS = 5_000;

    private final HttpApiConfig config;
    private final HttpMetrics metrics = new HttpMetrics();
    private final HttpApi api;
    private final List<AutoCloseable> registrations;
    private final EventLoopGroup acceptGroup;
    private final EventLoopGroup ioGroup;
    private final ChannelGroup channels = new DefaultChannelGroup("sluice-http", GlobalEventExecutor.INSTANCE, true);
    private final Channel serverChannel;
    private final String transport;
    private final int port;
    private boolean closed;

    /** A server whose {@code /metrics} shows the broker's and its own series only. */
    public HttpApiServer(HttpApiConfig config, Broker broker) {
        this(config, broker, null);
    }

    /**
     * @param registry the process's metrics, shown on {@code GET /metrics}; this server adds the broker's series
     *                 (partitions, latencies, consumer groups) and its own, and removes them on close. Null for a
     *                 private registry.
     */
    public HttpApiServer(HttpApiConfig config, Broker broker, MetricsRegistry registry) {
        this(config, broker, registry, null);
    }

    /**
     * @param health health of other components (a {@link HealthRegistry}), or null: {@code GET /health} answers 503
     *               with their reasons when any is unhealthy. Called from an I/O thread: cheap and non-blocking
     */
    public HttpApiServer(HttpApiConfig config, Broker broker, MetricsRegistry registry,
                            Supplier<Map<String, HealthRegistry.Health>> health) {
        this.config = Objects.requireNonNull(config, "config");
        Objects.requireNonNull(broker, "broker");
        SslContext ssl = config.tls() == null ? null : config.tls().newServerContext();
        BindCheck.warnIfExposedWithoutAuth("HTTP", config.bindAddress(), config.auth() != null);
        MetricsRegistry metricsRegistry = registry == null ? new MetricsRegistry() : registry;
        this.registrations = List.of(metricsRegistry.register(new BrokerCollector(broker)),
                metricsRegistry.register(new HttpCollector(metrics)));
        this.api = new HttpApi(broker, config, metrics, metricsRegistry, health);

        boolean epoll = Epoll.isAvailable();
        IoHandlerFactory io = epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
        Class<? extends ServerChannel> channelType = epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
        this.transport = epoll ? "epoll" : "nio";
        this.acceptGroup = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("sluice-http-accept", true), io);
        this.ioGroup = new MultiThreadIoEventLoopGroup(config.ioThreads(), new DefaultThreadFactory("sluice-http-io", true), io);
        try {
            ServerBootstrap bootstrap = new ServerBootstrap()
                    .group(acceptGroup, ioGroup)
                    .channel(channelType)
                    .option(ChannelOption.SO_BACKLOG, 1024)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            channels.add(ch);
                            ChannelPipeline p = ch.pipeline();
                            if (ssl != null) {
                                p.addLast("tls", ssl.newHandler(ch.alloc()));
                            }
                            ConnectionGuard guard = new ConnectionGuard(metrics, config.maxConnections(),
                                    config.idleTimeoutMillis(), config.requestTimeoutMillis(), config.headerTimeoutMillis(),
                                    config.auth() == null ? 0 : config.maxUnauthenticatedConnections());
                            p.addLast("guard", guard);
                            p.addLast("codec", new HttpServerCodec(HttpApiConfig.MAX_INITIAL_LINE_BYTES,
                                    HttpApiConfig.MAX_HEADER_BYTES, 8192));
                            // the token is checked on the headers, before anything below reads, inflates or holds a body
                            p.addLast("auth", new AuthGate(config.auth(), guard));
                            // gzip/deflate bodies; one decompressed buffer never exceeds the body limit (bomb-safe)
                            p.addLast("inflate", new HttpContentDecompressor(config.maxBodyBytes()));
                            p.addLast("aggregator", new BodyAggregator(config.maxBodyBytes(), metrics));
                            p.addLast("api", new HttpApiHandler(api, guard));
                        }
                    });
            this.serverChannel = bootstrap.bind(config.bindAddress(), config.port()).syncUninterruptibly().channel();
            this.port = ((InetSocketAddress) serverChannel.localAddress()).getPort();
        } catch (Exception e) { // Netty rethrows the bind's IOException undeclared: catch everything here
            shutdownGroups();
            api.close();
            unregisterMetrics();
            throw new SluiceException(SluiceException.Code.INVALID_CONFIG, "cannot bind HTTP listener to "
                    + config.bindAddress() + ":" + config.port() + ": " + e.getMessage(), e);
        }
        LOG.info("HTTP listener on {}:{} ({}, {}, auth {})", config.bindAddress(), port(), transport,
                ssl == null ? "plaintext" : "TLS", config.auth() == null ? "off" : "on");
    }

    /** The bound port (the actual one when configured with port 0). */
    public int port() {
        return port;
    }

    public HttpApiConfig config() {
        return config;
    }

    /** "epoll" or "nio". */
    public String transport() {
        return transport;
    }

    /** Open connections now. */
    public int connectionCount() {
        return metrics.openConnections.get();
    }

    /**
     * Stops accepting, answers new requests {@code 503}, waits for the acknowledgements of the events already
     * accepted (their requests get their answers), closes every connection and stops the threads. Idempotent.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        serverChannel.close().syncUninterruptibly();
        // Answer what is in progress before closing connections: once drained, every pending answer is already
        // queued on its connection's event loop, ahead of the close below.
        int unanswered = api.drain(SHUTDOWN_TIMEOUT_MILLIS);
        if (unanswered > 0) {
            LOG.warn("closing the HTTP listener with {} produce requests still unanswered after {} ms; their events "
                    + "may still be written", unanswered, SHUTDOWN_TIMEOUT_MILLIS);
        }
        channels.close().awaitUninterruptibly(SHUTDOWN_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
        api.close();
        shutdownGroups();
        unregisterMetrics();
        LOG.info("HTTP listener on {}:{} closed", config.bindAddress(), port);
    }

    private void unregisterMetrics() {
        for (AutoCloseable r : registrations) {
            try {
                r.close();
            } catch (Exception e) {
                LOG.warn("cannot unregister metrics: {}", e.toString());
            }
        }
    }

    private void shutdownGroups() {
        acceptGroup.shutdownGracefully(SHUTDOWN_QUIET_MILLIS, SHUTDOWN_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
        ioGroup.shutdownGracefully(SHUTDOWN_QUIET_MILLIS, SHUTDOWN_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
        acceptGroup.terminationFuture().awaitUninterruptibly(SHUTDOWN_TIMEOUT_MILLIS);
        ioGroup.terminationFuture().awaitUninterruptibly(SHUTDOWN_TIMEOUT_MILLIS);
    }

    @Override
    public String toString() {
        return "HttpApiServer[" + config.bindAddress() + ":" + port + ", " + transport + "]";
    }
}
