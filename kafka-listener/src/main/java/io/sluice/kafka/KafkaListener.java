package io.sluice.kafka;

import io.sluice.core.Broker;
import io.sluice.core.SluiceException;
import io.sluice.kafka.internal.KafkaApis;
import io.sluice.kafka.internal.KafkaConnection;
import io.sluice.kafka.internal.KafkaCounters;
import io.sluice.kafka.internal.ListenerContext;
import io.sluice.net.server.pipeline.FramedListener;
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
    private final ExecutorService admin;
    private final KafkaCounters counters = new KafkaCounters();
    private final ListenerContext context;
    private final FramedListener listener;
    private boolean closed;

    private KafkaListener(Broker broker, KafkaListenerConfig config) {
        this.config = config;
        this.admin = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "sluice-kafka-admin");
            t.setDaemon(true);
            return t;
        });
        this.context = new ListenerContext(broker, config, counters, admin, advertisedHost(config));
        context.apis(KafkaApis.standard(context));
        try {
            // Kafka's framing is the binary port's: an int32 length, then the request (8-byte fixed header)
            this.listener = FramedListener.bind("kafka", "Kafka connection", config.server(), config.port(), counters,
                    () -> new KafkaConnection(context));
        } catch (RuntimeException e) {
            shutdownAdmin();
            throw e;
        }
        context.advertisedPort(port());
        LOG.info("Kafka listener on {} ({} transport), advertised as {}:{}, cluster id {}, node {}",
                listener.localAddress(), listener.transport(), context.advertisedHost(), context.advertisedPort(),
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
        return listener.localAddress();
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
        listener.close();
        shutdownAdmin();
        LOG.info("Kafka listener stopped");
    }

    private void shutdownAdmin() {
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
}
