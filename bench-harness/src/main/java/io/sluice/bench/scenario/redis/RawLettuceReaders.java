package io.sluice.bench.scenario.redis;

import io.lettuce.core.Consumer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.XGroupCreateArgs;
import io.lettuce.core.XReadArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import org.HdrHistogram.Histogram;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The baseline's receivers, tuned like Sluice's consumer: members of one group, each on its own connection and
 * thread, {@code XREADGROUP COUNT 500 BLOCK 50 … >}, with the acknowledgements of the last 10 ms (or 500 entries) sent as
 * one XACK in front of a read — what the transport's {@code commitAsync} does with {@code asyncCommitLingerMillis = 10}.
 */
final class RawLettuceReaders implements Receivers {
    private static final byte[] GROUP = TransportReceivers.GROUP.getBytes(StandardCharsets.UTF_8);
    private static final long ACK_LINGER_NANOS = TimeUnit.MILLISECONDS.toNanos(TransportReceivers.ACK_LINGER_MILLIS);
    private final byte[] stream;
    private final List<Thread> threads = new ArrayList<>();
    private final List<StatefulRedisConnection<byte[], byte[]>> connections = new ArrayList<>();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private volatile boolean stopped;

    RawLettuceReaders(RedisClient client, String key, int consumers, Tally tally) {
        this.stream = key.getBytes(StandardCharsets.UTF_8);
        try (StatefulRedisConnection<byte[], byte[]> admin = client.connect(ByteArrayCodec.INSTANCE)) {
            admin.sync().xgroupCreate(XReadArgs.StreamOffset.from(stream, "$"), GROUP, XGroupCreateArgs.Builder.mkstream(true));
        }
        for (int c = 0; c < consumers; c++) {
            StatefulRedisConnection<byte[], byte[]> conn = client.connect(ByteArrayCodec.INSTANCE);
            conn.setAutoFlushCommands(false);
            connections.add(conn);
            Histogram h = tally.newHistogram();
            Consumer<byte[]> me = Consumer.from(GROUP, ("raw-" + c).getBytes(StandardCharsets.UTF_8));
            threads.add(new Thread(() -> loop(conn, me, tally, h), "e2e-raw-consumer-" + c));
        }
        threads.forEach(Thread::start);
    }

    private void loop(StatefulRedisConnection<byte[], byte[]> conn, Consumer<byte[]> me, Tally tally, Histogram h) {
        RedisAsyncCommands<byte[], byte[]> redis = conn.async();
        XReadArgs args = XReadArgs.Builder.count(500).block(50);
        List<String> toAck = new ArrayList<>();
        long ackSince = -1;
        try {
            while (!stopped) {
                boolean due = !toAck.isEmpty() && (toAck.size() >= 500 || System.nanoTime() - ackSince >= ACK_LINGER_NANOS);
                RedisFuture<Long> ack = due ? redis.xack(stream, GROUP, toAck.toArray(new String[0])) : null;
                if (due) {
                    toAck.clear();
                    ackSince = -1;
                }
                RedisFuture<List<StreamMessage<byte[], byte[]>>> read = redis.xreadgroup(me, args, XReadArgs.StreamOffset.lastConsumed(stream));
                conn.flushCommands();
                List<StreamMessage<byte[], byte[]>> batch = read.get(10, TimeUnit.SECONDS);
                if (ack != null) {
                    ack.get(10, TimeUnit.SECONDS);
                }
                if (batch.isEmpty()) {
                    continue;
                }
                long now = System.nanoTime();
                if (ackSince < 0) {
                    ackSince = now;
                }
                for (StreamMessage<byte[], byte[]> m : batch) {
                    toAck.add(m.getId());
                    tally.received(m.getBody().values().iterator().next(), now, h);
                }
            }
        } catch (Exception e) {
            if (!stopped) {
                failure.compareAndSet(null, e);
            }
        }
    }

    @Override
    public List<Thread> threads() {
        return threads;
    }

    @Override
    public void stop() throws InterruptedException {
        stopped = true;
        for (Thread t : threads) {
            t.join(10_000);
        }
    }

    @Override
    public Throwable failure() {
        return failure.get();
    }

    @Override
    public void close() throws InterruptedException {
        if (!stopped) {
            stop();
        }
        connections.forEach(StatefulRedisConnection::close);
    }
}
