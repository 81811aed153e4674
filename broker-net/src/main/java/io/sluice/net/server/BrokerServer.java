package io.sluice.net.server;

import io.sluice.core.Broker;
import io.sluice.net.server.internal.RequestHandler;
import io.sluice.net.server.internal.ServerContext;
import io.sluice.net.server.internal.ServerCounters;
import io.sluice.net.server.pipeline.FramedListener;
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
    private final ExecutorService admin;
    private final ExecutorService groups;
    private final ServerCounters counters = new ServerCounters();
    private final ServerContext context;
    private final FramedListener listener;
    private boolean closed;

    private BrokerServer(Broker broker, BrokerServerConfig config) {
        this.config = config;
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
        this.context = new ServerContext(broker, config, counters, admin, groups);
        try {
            this.listener = FramedListener.bind("broker", "connection", config, config.port(), counters,
                    () -> new RequestHandler(context));
        } catch (RuntimeException e) {
            shutdownExecutors();
            context.close();
            throw e;
        }
        if (!isLoopback(config.bindAddress()) && config.authToken() == null) {
            LOG.warn("listening on {} without authentication: any host that reaches this port can produce and consume",
                    config.bindAddress());
        }
        LOG.info("broker listening on {} ({} transport, {})", listener.localAddress(), listener.transport(), config);
    }

    /** Binds and starts serving; fails with {@link SluiceException} if the address cannot be bound. */
    public static BrokerServer start(Broker broker, BrokerServerConfig config) {
        return new BrokerServer(broker, config);
    }

    public BrokerServerConfig config() {
        return config;
    }

    public InetSocketAddress localAddress() {
        return listener.localAddress();
    }

    /** The bound port (useful with port 0). */
    public int port() {
        return localAddress().getPort();
    }

    /** The transport in use: EPOLL or NIO. */
    public String transport() {
        return listener.transport();
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
        listener.close();
        shutdownExecutors();
        context.close();
        LOG.info("broker server stopped: {}", counters.snapshot());
    }

    private void shutdownExecutors() {
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
