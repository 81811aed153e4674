package io.sluice.net.client.internal;

import io.netty.channel.EventLoopGroup;
import io.sluice.core.SluiceException;
import io.sluice.net.client.ClientConfig;
import io.sluice.net.internal.Transport;
import io.sluice.net.protocol.ApiKey;
import io.sluice.net.protocol.Metadata;

import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * A client's link to the broker: one event-loop thread ({@code sluice-<kind>-<clientId>}) and one connection,
 * re-established on demand after it was lost (reconnect), plus a cache of topic partition counts.
 */
public final class Connector implements AutoCloseable {
    private final ClientConfig config;
    private final Transport transport;
    private final EventLoopGroup group;
    private final ConcurrentHashMap<String, Integer> partitionCounts = new ConcurrentHashMap<>();
    private volatile ClientConnection connection;
    private volatile boolean closed;

    public Connector(ClientConfig config, String kind) {
        this.config = config;
        this.transport = Transport.select(config.preferNativeTransport());
        this.group = transport.newGroup(1, "sluice-" + kind + "-" + config.clientId());
    }

    public ClientConfig config() {
        return config;
    }

    public io.netty.channel.EventLoop eventLoop() {
        return group.next();
    }

    /** The live connection, connecting (blocking up to connectTimeoutMillis) when there is none. */
    public ClientConnection connected() {
        ClientConnection c = connection;
        if (c != null && c.isActive()) {
            return c;
        }
        synchronized (this) {
            if (closed) {
                throw new SluiceException.ClosedException("client is closed");
            }
            c = connection;
            if (c == null || !c.isActive()) {
                c = ClientConnection.connect(config, group, transport);
                connection = c;
            }
            return c;
        }
    }

    /** The current connection, possibly closed or null; never blocks. */
    public ClientConnection current() {
        return connection;
    }

    /** Partition count of a topic, from cache or a METADATA request. */
    public int partitionCount(String topic) {
        Integer n = partitionCounts.get(topic);
        if (n != null) {
            return n;
        }
        Metadata.Response r = connected().call(ApiKey.METADATA, new Metadata.Request(List.of(topic))::encode,
                Metadata.Response::decode, config.requestTimeoutMillis());
        int count = r.topics().get(0).describedOrThrow().config().partitions();
        partitionCounts.put(topic, count);
        return count;
    }

    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        ClientConnection c = connection;
        if (c != null) {
            c.close();
        }
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
    }
}
