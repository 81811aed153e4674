package io.sluice.bench.scenario.redis;

import io.lettuce.core.Consumer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.XGroupCreateArgs;
import io.lettuce.core.XReadArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import io.sluice.bench.internal.Latency;
import org.HdrHistogram.Histogram;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The receiving side of the redis-e2e scenario, identical for Sluice and the baseline: {@code consumers} members of
 * one consumer group, each on its own connection and thread, {@code XREADGROUP COUNT 500 BLOCK 50 … >} then
 * {@code XACK}. Each received envelope's latency is measured from its intended send time; duplicates are counted.
 */
final class StreamReaders implements AutoCloseable {
    static final String GROUP_NAME = "bench-group";
    private static final byte[] GROUP = GROUP_NAME.getBytes(StandardCharsets.UTF_8);

    private final byte[] stream;
    private final long[] intended;
    private final AtomicIntegerArray seen;
    private final AtomicLong received = new AtomicLong();
    private final AtomicLong duplicates = new AtomicLong();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private final List<Thread> threads = new ArrayList<>();
    private final List<Histogram> histograms = new ArrayList<>();
    private final List<StatefulRedisConnection<byte[], byte[]>> connections = new ArrayList<>();
    private volatile boolean stopped;
    private volatile long lastReceiveNanos;

    StreamReaders(RedisClient client, byte[] stream, int consumers, long[] intended, int expected) {
        this.stream = stream;
        this.intended = intended;
        this.seen = new AtomicIntegerArray(expected);
        try (StatefulRedisConnection<byte[], byte[]> admin = client.connect(ByteArrayCodec.INSTANCE)) {
            admin.sync().xgroupCreate(XReadArgs.StreamOffset.from(stream, "$"), GROUP, XGroupCreateArgs.Builder.mkstream(true));
        }
        for (int c = 0; c < consumers; c++) {
            StatefulRedisConnection<byte[], byte[]> conn = client.connect(ByteArrayCodec.INSTANCE);
            connections.add(conn);
            Histogram h = Latency.newHistogram();
            histograms.add(h);
            Consumer<byte[]> me = Consumer.from(GROUP, ("consumer-" + c).getBytes(StandardCharsets.UTF_8));
            Thread t = new Thread(() -> readLoop(conn.sync(), me, h), "e2e-consumer-" + c);
            t.setDaemon(true);
            threads.add(t);
        }
        threads.forEach(Thread::start);
    }

    private void readLoop(RedisCommands<byte[], byte[]> redis, Consumer<byte[]> me, Histogram h) {
        XReadArgs args = XReadArgs.Builder.count(500).block(50);
        try {
            while (!stopped) {
                List<StreamMessage<byte[], byte[]>> batch = redis.xreadgroup(me, args, XReadArgs.StreamOffset.lastConsumed(stream));
                if (batch.isEmpty()) {
                    continue;
                }
                long now = System.nanoTime();
                String[] ids = new String[batch.size()];
                int i = 0;
                for (StreamMessage<byte[], byte[]> m : batch) {
                    ids[i++] = m.getId();
                    byte[] body = m.getBody().values().iterator().next();
                    int seq = Envelope.sequence(body);
                    if (seq < 0 || seq >= seen.length() || seen.getAndSet(seq, 1) != 0) {
                        duplicates.incrementAndGet();
                        continue;
                    }
                    Latency.record(h, now - intended[seq]);
                    received.incrementAndGet();
                }
                lastReceiveNanos = now;
                redis.xack(stream, GROUP, ids);
            }
        } catch (RuntimeException e) {
            if (!stopped) {
                failure.compareAndSet(null, e);
            }
        }
    }

    long received() {
        return received.get();
    }

    long duplicates() {
        return duplicates.get();
    }

    long lastReceiveNanos() {
        return lastReceiveNanos;
    }

    Throwable failure() {
        return failure.get();
    }

    /** Stops the readers; the merged histogram is then safe to read. */
    Histogram stopAndMerge() throws InterruptedException {
        stopped = true;
        for (Thread t : threads) {
            t.join(5_000);
        }
        return Latency.merge(histograms.toArray(new Histogram[0]));
    }

    @Override
    public void close() throws InterruptedException {
        if (!stopped) {
            stopAndMerge();
        }
        connections.forEach(StatefulRedisConnection::close);
    }
}
