package io.sluice.bench.scenario.redis;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.XAddArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.codec.ByteArrayCodec;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The baseline: the publisher thread itself calls Lettuce's {@code XADD key MAXLEN ~ 10000 * data <envelope>} on one
 * auto-flushing connection (each command written at once, as Sluice's producer does with linger 0), with the same
 * in-flight bound (4,096) — no Sluice code. Its MAXLEN trims whether or not the group has read the entries.
 */
final class RawLettucePublisher implements Publisher {
    private static final byte[] FIELD = "data".getBytes(StandardCharsets.UTF_8);
    private final StatefulRedisConnection<byte[], byte[]> connection;
    private final RedisAsyncCommands<byte[], byte[]> redis;
    private final XAddArgs trim = new XAddArgs().maxlen(10_000).approximateTrimming(true);
    private final Semaphore inFlight = new Semaphore(4_096);
    private final AtomicLong issued = new AtomicLong();
    private final AtomicLong completed = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final String keyPrefix;

    RawLettucePublisher(RedisClient client, String keyPrefix) {
        this.connection = client.connect(ByteArrayCodec.INSTANCE);
        this.redis = connection.async();
        this.keyPrefix = keyPrefix;
    }

    /** Same key layout as the transport's partition 0. */
    static String streamKey(String keyPrefix, String topic) {
        return keyPrefix + "{" + topic + "}:0";
    }

    @Override
    public void publish(String topic, byte[] envelope) throws InterruptedException {
        inFlight.acquire();
        issued.incrementAndGet();
        RedisFuture<String> f = redis.xadd(streamKey(keyPrefix, topic).getBytes(StandardCharsets.UTF_8), trim, FIELD, envelope);
        f.whenComplete((id, error) -> {
            if (error != null) {
                failed.incrementAndGet();
            }
            inFlight.release();
            completed.incrementAndGet();
        });
    }

    @Override
    public void flush() throws InterruptedException {
        long target = issued.get();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (completed.get() < target) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("XADDs unacknowledged after 30 s");
            }
            java.util.concurrent.locks.LockSupport.parkNanos(50_000);
        }
        if (failed.get() > 0) {
            throw new IllegalStateException(failed.get() + " XADDs failed");
        }
    }

    @Override
    public void close() {
        connection.close();
    }
}
