package io.sluice.redis;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.RedisClusterURIUtil;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.lettuce.core.cluster.event.ClusterTopologyChangedEvent;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.metrics.CommandLatencyRecorder;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.NettyCustomizer;
import io.netty.channel.Channel;
import io.netty.handler.flush.FlushConsolidationHandler;
import io.netty.util.concurrent.DefaultThreadFactory;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Where a Redis is: one server ({@link RedisClient}) or a Redis Cluster ({@link RedisClusterClient}). Its users
 * ({@link StreamWriter}, {@link GroupReader}, {@link DeadLetterStream}: what ingest's stream strategies store through;
 * {@link RedisStreamsProducer} and {@link RedisStreamsConsumer}, each on an endpoint of its own) see only a {@link Link}: Lettuce's {@link RedisClusterCommands} / {@link RedisClusterAsyncCommands}, the interfaces
 * that a single server's {@code RedisCommands} and a cluster's {@code RedisAdvancedClusterCommands} share (streams,
 * keys, server info), so one piece of code serves both.
 *
 * <p>Cluster: every command of those users names one key (the stream, or its dead-letter stream, both with the
 * stream's hash tag, so on one slot), or several keys of one hash tag (the consumer's {@code XREADGROUP} over a topic's
 * partition streams, {@code <prefix>{<topic>}:<p>}), and no Lua script is used, so no command can fail with CROSSSLOT. The client
 * follows MOVED and ASK redirects (resharding), refreshes the topology every {@code redis.cluster.refresh.ms} and
 * on redirects and persistent reconnects (a failover: the dead master's slots move to its promoted replica), and
 * rejects commands for a node it is disconnected from instead of buffering them, as the single-server client of
 * {@link #RedisEndpoint(String, boolean, long)} does.
 * Keyless commands ({@code INFO}) go to any node. Thread-safe; each {@link Link} belongs to one thread.
 *
 * <p>Lettuce opens a cluster connection's per-node connections lazily, and with {@code REJECT_COMMANDS} it rejects
 * a command whose node connection is still being opened. So a new link opens its connections to every master at
 * once, and after each topology change (a promoted replica, a moved slot) the masters' connections of every open
 * link are opened in the background: only commands sent in the moment between the change and that connect are
 * refused (and reported, or retried by ingest's drainers).
 */
public final class RedisEndpoint implements AutoCloseable {
    private final AbstractRedisClient client;
    private final boolean cluster;
    private final Set<StatefulRedisClusterConnection<byte[], byte[]>> clusterLinks = ConcurrentHashMap.newKeySet();
    private final ClientResources ownResources;
    private reactor.core.Disposable topologyEvents;

    /** One connection and its command interfaces. */
    public record Link(StatefulConnection<byte[], byte[]> connection, RedisClusterCommands<byte[], byte[]> sync,
                RedisClusterAsyncCommands<byte[], byte[]> async, Runnable onClose) implements AutoCloseable {
        @Override
        public void close() {
            onClose.run();
            connection.close();
        }
    }

    /**
     * @param url              {@code redis://host:port}; for a cluster, seed nodes {@code redis://h1:p1,h2:p2}
     * @param cluster          whether {@code url} names a Redis Cluster
     * @param clusterRefreshMs how often a cluster's topology is refreshed (also on redirects and reconnects)
     */
    public RedisEndpoint(String url, boolean cluster, long clusterRefreshMs) {
        this(url, cluster, clusterRefreshMs, null, null, -1,
                options -> options.disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS));
    }

    /**
     * The endpoint of a {@link RedisStreamsProducer} or {@link RedisStreamsConsumer}: {@code config}'s URI (and
     * {@code cluster}), its shared {@link ClientResources}, or else private ones sized for one connection: Netty I/O
     * and computation pools of Lettuce's minimum size (2; threads start on first use), named
     * {@code sluice-redis-<role>-...}, and no command-latency histograms (they cost CPU on every reply). On one
     * server, a disconnected client queues commands and re-sends them after reconnecting (Lettuce's default: the
     * producer's and consumer's fault tests rely on it); on a cluster, it rejects them as the other endpoints do.
     *
     * @param producer for a producer: (1) Netty's {@link FlushConsolidationHandler} in front of the socket (private
     *                 resources only): flushes requested while the event loop still has writes queued become one
     *                 {@code writev} — smart batching of per-send flushes under load, with no delay when idle; (2) every
     *                 command fails after {@code commandTimeoutMillis} (a send is never left hanging). A consumer bounds
     *                 its own waits instead (its blocking reads outlast the command timeout).
     */
    RedisEndpoint(RedisStreamsConfig config, String role, boolean producer) {
        this(config.uri(), config.cluster(), config.clusterRefreshMillis(), config.clientResources() == null
                ? privateResources(role, producer) : null, config.clientResources(), config.commandTimeoutMillis(),
                options -> options
                        // Lettuce's own queue never holds more than our in-flight bound (plus control commands)
                        .requestQueueSize(Math.max(64, config.maxInFlight() + 64))
                        .timeoutOptions(producer ? TimeoutOptions.enabled(Duration.ofMillis(config.commandTimeoutMillis()))
                                : TimeoutOptions.builder().timeoutCommands(false).build()));
    }

    /**
     * @param ownResources resources this endpoint shuts down on close (null: none)
     * @param shared       resources of the application (null: {@code ownResources}, or else the client's defaults)
     * @param timeoutMs    every URI's command timeout ({@code -1}: Lettuce's default)
     * @param options      settings on top of auto-reconnect (and, for a cluster, of rejecting commands while
     *                     disconnected and of the topology refresh)
     */
    private RedisEndpoint(String url, boolean cluster, long clusterRefreshMs, ClientResources ownResources,
                          ClientResources shared, long timeoutMs,
                          java.util.function.Consumer<ClientOptions.Builder> options) {
        this.cluster = cluster;
        this.ownResources = ownResources;
        ClientResources resources = shared != null ? shared : ownResources;
        if (cluster) {
            List<RedisURI> seeds = RedisClusterURIUtil.toRedisURIs(URI.create(url)); // redis://h1:p1,h2:p2
            if (timeoutMs > 0) {
                seeds.forEach(u -> u.setTimeout(Duration.ofMillis(timeoutMs)));
            }
            RedisClusterClient c = resources == null ? RedisClusterClient.create(seeds) : RedisClusterClient.create(resources, seeds);
            ClusterClientOptions.Builder builder = ClusterClientOptions.builder()
                    .autoReconnect(true)
                    .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                    .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
                            .enablePeriodicRefresh(Duration.ofMillis(clusterRefreshMs))
                            .enableAllAdaptiveRefreshTriggers()
                            .adaptiveRefreshTriggersTimeout(Duration.ofMillis(Math.min(1_000, clusterRefreshMs)))
                            .refreshTriggersReconnectAttempts(2)
                            .dynamicRefreshSources(true)
                            .closeStaleConnections(true)
                            .build());
            options.accept(builder);
            builder.disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS); // see the class comment
            c.setOptions(builder.build());
            this.client = c;
            this.topologyEvents = c.getResources().eventBus().get()
                    .filter(e -> e instanceof ClusterTopologyChangedEvent)
                    .subscribe(e -> clusterLinks.forEach(l -> openMasterConnections(l, false)));
        } else {
            RedisURI uri = RedisURI.create(url);
            if (timeoutMs > 0) {
                uri.setTimeout(Duration.ofMillis(timeoutMs));
            }
            RedisClient c = resources == null ? RedisClient.create(uri) : RedisClient.create(resources, uri);
            ClientOptions.Builder builder = ClientOptions.builder().autoReconnect(true);
            options.accept(builder);
            c.setOptions(builder.build());
            this.client = c;
        }
    }

    private static ClientResources privateResources(String role, boolean producer) {
        DefaultClientResources.Builder builder = DefaultClientResources.builder();
        if (producer) {
            builder.nettyCustomizer(new NettyCustomizer() {
                @Override
                public void afterChannelInitialized(Channel channel) {
                    channel.pipeline().addFirst("sluice-flush-consolidation", new FlushConsolidationHandler(256, true));
                }
            });
        }
        return builder
                .ioThreadPoolSize(2)
                .computationThreadPoolSize(2)
                .commandLatencyRecorder(CommandLatencyRecorder.disabled())
                // Netty's factory: FastThreadLocalThreads (cheaper buffers on them), daemon, named prefix-<pool>-<n>
                .threadFactoryProvider(pool -> new DefaultThreadFactory("sluice-redis-" + role + "-" + pool, true))
                .build();
    }

    public boolean isCluster() {
        return cluster;
    }

    /** A new connection (to the cluster: one logical connection routing each command to its slot's master). */
    public Link connect() {
        if (client instanceof RedisClusterClient c) {
            StatefulRedisClusterConnection<byte[], byte[]> conn = c.connect(ByteArrayCodec.INSTANCE);
            openMasterConnections(conn, true);
            clusterLinks.add(conn);
            return new Link(conn, conn.sync(), conn.async(), () -> clusterLinks.remove(conn));
        }
        StatefulRedisConnection<byte[], byte[]> conn = ((RedisClient) client).connect(ByteArrayCodec.INSTANCE);
        return new Link(conn, conn.sync(), conn.async(), () -> { });
    }

    /**
     * Opens the connection of {@code conn} to every master that is not failed; {@code await}: waits for each (a
     * master that cannot be reached is left to the first command, which is refused and retried).
     */
    private static void openMasterConnections(StatefulRedisClusterConnection<byte[], byte[]> conn, boolean await) {
        for (RedisClusterNode node : conn.getPartitions()) {
            if (!node.is(RedisClusterNode.NodeFlag.UPSTREAM) || node.is(RedisClusterNode.NodeFlag.FAIL)
                    || node.getSlots().isEmpty()) {
                continue;
            }
            var opening = conn.getConnectionAsync(node.getUri().getHost(), node.getUri().getPort());
            if (await) {
                try {
                    opening.get(10, java.util.concurrent.TimeUnit.SECONDS);
                } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                    // unreachable now: its commands are refused until it answers or its replica takes over
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            } else {
                opening.exceptionally(e -> null);
            }
        }
    }

    @Override
    public void close() {
        if (topologyEvents != null) {
            topologyEvents.dispose();
        }
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        if (ownResources != null) {
            ownResources.shutdown(0, 5, java.util.concurrent.TimeUnit.SECONDS);
        }
    }
}
