package io.sluice.bench.scenario.redis;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.XAddArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.codec.ByteArrayCodec;

import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;

/**
 * Pipelined {@code XADD key MAXLEN ~ 10000 * data <envelope>} on one connection, used by one thread: commands are
 * written without flushing and pushed out by {@link #flush()} (the caller's end of batch) or every
 * {@link #FLUSH_EVERY} commands; at most {@link #MAX_IN_FLIGHT} replies may be outstanding (then it waits for the
 * oldest), so memory stays bounded whatever the message count.
 */
final class PipelinedXadd implements AutoCloseable {
    static final int FLUSH_EVERY = 64;
    static final int MAX_IN_FLIGHT = 2_048;
    private static final byte[] FIELD = "data".getBytes(StandardCharsets.UTF_8);

    private final StatefulRedisConnection<byte[], byte[]> connection;
    private final RedisAsyncCommands<byte[], byte[]> redis;
    private final XAddArgs trim = new XAddArgs().maxlen(10_000).approximateTrimming(true);
    private final ArrayDeque<RedisFuture<String>> inFlight = new ArrayDeque<>();
    private final LagGuard guard;
    private int unflushed;
    private volatile byte[] stream;

    /** @param guard null for a writer that does not watch its consumer group (the raw baseline) */
    PipelinedXadd(RedisClient client, LagGuard guard) {
        connection = client.connect(ByteArrayCodec.INSTANCE);
        connection.setAutoFlushCommands(false);
        redis = connection.async();
        this.guard = guard;
    }

    void target(byte[] stream) {
        this.stream = stream;
    }

    void xadd(byte[] envelope) throws Exception {
        inFlight.add(redis.xadd(stream, trim, FIELD, envelope));
        if (++unflushed >= FLUSH_EVERY) {
            flush();
        }
        while (inFlight.size() > MAX_IN_FLIGHT) {
            flush();
            inFlight.poll().get(30, TimeUnit.SECONDS);
        }
        while (!inFlight.isEmpty() && inFlight.peek().isDone()) {
            inFlight.poll().get();
        }
        if (guard != null) {
            guard.afterWrite(stream, this::flush);
        }
    }

    void flush() {
        if (unflushed > 0) {
            connection.flushCommands();
            unflushed = 0;
        }
    }

    /** Flushes and waits for every reply (surfacing any error). */
    void drain() throws Exception {
        flush();
        while (!inFlight.isEmpty()) {
            inFlight.poll().get(30, TimeUnit.SECONDS);
        }
    }

    @Override
    public void close() {
        connection.close();
        if (guard != null) {
            guard.close();
        }
    }
}
