package io.sluice.redis.internal;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.metrics.CommandLatencyRecorder;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.NettyCustomizer;
import io.netty.channel.Channel;
import io.netty.handler.flush.FlushConsolidationHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.sluice.redis.RedisStreamsConfig;

import java.time.Duration;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

/**
 * One Lettuce client per producer or consumer. Unless the application shares its own {@link ClientResources}, the
 * client gets private ones sized for one connection: Netty I/O and computation pools of Lettuce's minimum size (2; threads start on first use, one connection uses one I/O thread), named
 * {@code sluice-redis-<role>-...}, and no command-latency histograms (they cost CPU on every reply).
 */
public final class RedisClients implements AutoCloseable {
    private final RedisClient client;
    private final ClientResources ownResources;

    public RedisClients(RedisStreamsConfig config, String role) {
        this(config, role, false);
    }

    /**
     * @param producer for a producer: (1) Netty's {@link FlushConsolidationHandler} in front of the socket (private
     *                 resources only): flushes requested while the event loop still has writes queued become one
     *                 {@code writev} — smart batching of per-send flushes under load, with no delay when idle; (2) every
     *                 command fails after {@code commandTimeoutMillis} (a send is never left hanging). A consumer bounds
     *                 its own waits instead (its blocking reads outlast the command timeout).
     */
    public RedisClients(RedisStreamsConfig config, String role, boolean producer) {
        boolean consolidateFlushes = producer;
        ClientResources resources = config.clientResources();
        if (resources == null) {
            DefaultClientResources.Builder builder = DefaultClientResources.builder();
            if (consolidateFlushes) {
                builder.nettyCustomizer(new NettyCustomizer() {
                    @Override
                    public void afterChannelInitialized(Channel channel) {
                        channel.pipeline().addFirst("sluice-flush-consolidation", new FlushConsolidationHandler(256, true));
                    }
                });
            }
            ownResources = builder
                    .ioThreadPoolSize(2)
                    .computationThreadPoolSize(2)
                    .commandLatencyRecorder(CommandLatencyRecorder.disabled())
                    .threadFactoryProvider(pool -> named("sluice-redis-" + role + "-" + pool))
                    .build();
            resources = ownResources;
        } else {
            ownResources = null;
        }
        RedisURI uri = RedisURI.create(config.uri());
        uri.setTimeout(Duration.ofMillis(config.commandTimeoutMillis()));
        client = RedisClient.create(resources, uri);
        client.setOptions(ClientOptions.builder()
                .autoReconnect(true)
                // Lettuce's own queue never holds more than our in-flight bound (plus control commands)
                .requestQueueSize(Math.max(64, config.maxInFlight() + 64))
                .timeoutOptions(producer ? TimeoutOptions.enabled(Duration.ofMillis(config.commandTimeoutMillis()))
                        : TimeoutOptions.builder().timeoutCommands(false).build())
                .build());
    }

    public RedisClient client() {
        return client;
    }

    private static ThreadFactory named(String prefix) {
        // Netty's factory: FastThreadLocalThreads (Netty's buffers are cheaper on them), daemon, named prefix-<pool>-<n>
        return new DefaultThreadFactory(prefix, true);
    }

    @Override
    public void close() {
        client.shutdown(Duration.ZERO, Duration.ofSeconds(5));
        if (ownResources != null) {
            ownResources.shutdown(0, 5, TimeUnit.SECONDS);
        }
    }
}
