package io.sluice.bench.scenario.redis;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * Keeps a Redis stream writer from outrunning its consumer group by more than {@code MAXLEN} allows: with
 * {@code MAXLEN ~ 10000}, an entry the group has not read yet is trimmed (silently lost) once the group lags by more
 * than 10,000. Every {@link #CHECK_EVERY} writes it reads the group's {@code lag} ({@code XINFO GROUPS}, Redis 7.0+);
 * above {@link #HIGH_WATER} it waits until the lag is back under {@link #LOW_WATER}. Waiting blocks the writer, which
 * back-pressures whatever feeds it (for Sluice: the ring, then the producer) — bounded instead of lossy.
 */
final class LagGuard implements AutoCloseable {
    static final int CHECK_EVERY = 500;
    static final long HIGH_WATER = 7_000;
    static final long LOW_WATER = 3_000;

    private final StatefulRedisConnection<byte[], byte[]> connection;
    private final byte[] group;
    private int sinceCheck;
    private long waits;

    LagGuard(RedisClient client, String group) {
        this.connection = client.connect(ByteArrayCodec.INSTANCE);
        this.group = group.getBytes(StandardCharsets.UTF_8);
    }

    /** Called after each write to {@code stream}; may block while the group catches up. */
    void afterWrite(byte[] stream, Runnable flush) {
        if (++sinceCheck < CHECK_EVERY) {
            return;
        }
        sinceCheck = 0;
        if (lag(stream) <= HIGH_WATER) {
            return;
        }
        flush.run();
        waits++;
        while (lag(stream) > LOW_WATER) {
            LockSupport.parkNanos(200_000);
        }
    }

    long waits() {
        return waits;
    }

    /** The group's lag (entries added but not yet delivered to it); 0 when unknown. */
    long lag(byte[] stream) {
        List<Object> groups = connection.sync().xinfoGroups(stream);
        for (Object g : groups) {
            if (!(g instanceof List<?> fields)) {
                continue;
            }
            boolean mine = false;
            Long lag = null;
            for (int i = 0; i + 1 < fields.size(); i += 2) {
                String key = text(fields.get(i));
                Object value = fields.get(i + 1);
                if (key.equals("name")) {
                    mine = text(value).equals(new String(group, StandardCharsets.UTF_8));
                } else if (key.equals("lag") && value instanceof Long l) {
                    lag = l;
                }
            }
            if (mine && lag != null) {
                return lag;
            }
        }
        return 0;
    }

    private static String text(Object o) {
        return o instanceof byte[] b ? new String(b, StandardCharsets.UTF_8) : String.valueOf(o);
    }

    @Override
    public void close() {
        connection.close();
    }
}
