package io.sluice.redis;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.lettuce.core.cluster.event.ClusterTopologyChangedEvent;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.codec.ByteArrayCodec;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Where a Redis is: one server ({@link RedisClient}) or a Redis Cluster ({@link RedisClusterClient}). Its users
 * ({@link StreamWriter}, {@link GroupReader}, {@link DeadLetterStream}: what ingest's stream strategies store through)
 * see only a {@link Link}: Lettuce's {@link RedisClusterCommands} / {@link RedisClusterAsyncCommands}, the interfaces
 * that a single server's {@code RedisCommands} and a cluster's {@code RedisAdvancedClusterCommands} share (streams,
 * keys, server info), so one piece of code serves both.
 *
 * <p>Cluster: every command of those users names one key (the stream, or its dead-letter stream, both with the
 * stream's hash tag, so on one slot) and no Lua script is used, so no command can fail with CROSSSLOT. The client
 * follows MOVED and ASK redirects (resharding), refreshes the topology every {@code redis.cluster.refresh.ms} and
 * on redirects and persistent reconnects (a failover: the dead master's slots move to its promoted replica), and
 * rejects commands for a node it is disconnected from instead of buffering them, as the single-server client does.
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
        this.cluster = cluster;
        if (cluster) {
            RedisClusterClient c = RedisClusterClient.create(url); // seeds: redis://h1:p1,h2:p2
            c.setOptions(ClusterClientOptions.builder()
                    .autoReconnect(true)
                    .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                    .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
                            .enablePeriodicRefresh(Duration.ofMillis(clusterRefreshMs))
                            .enableAllAdaptiveRefreshTriggers()
                            .adaptiveRefreshTriggersTimeout(Duration.ofMillis(Math.min(1_000, clusterRefreshMs)))
                            .refreshTriggersReconnectAttempts(2)
                            .dynamicRefreshSources(true)
                            .closeStaleConnections(true)
                            .build())
                    .build());
            this.client = c;
            this.topologyEvents = c.getResources().eventBus().get()
                    .filter(e -> e instanceof ClusterTopologyChangedEvent)
                    .subscribe(e -> clusterLinks.forEach(l -> openMasterConnections(l, false)));
        } else {
            RedisClient c = RedisClient.create(RedisURI.create(url));
            c.setOptions(ClientOptions.builder()
                    .autoReconnect(true)
                    .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                    .build());
            this.client = c;
        }
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
    }
}
