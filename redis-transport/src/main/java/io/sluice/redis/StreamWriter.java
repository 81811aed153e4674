package io.sluice.redis;

import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.sluice.redis.internal.PackedEntries;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Appends events to one stream, many per entry ({@code XADD <stream> * b <packed events>}, see {@code PackedEntries}),
 * on one connection of a {@link RedisEndpoint} (one server or a cluster). <b>Single writer</b>: one thread calls
 * {@link #append} and {@link #flush}; the XADDs are pipelined (auto-flush off) and go out with {@link #flush}, and
 * their replies complete the callbacks on Lettuce's I/O thread, in send order.
 *
 * <p>The writer never trims: entries leave the stream once every group acknowledged them ({@link GroupReader}
 * removes them below {@link StreamGroups#floor}), so the writer's user bounds the stream by what it wrote and was not
 * yet acknowledged. Redis down: an XADD fails at once (disconnected commands are rejected, not buffered).
 */
public final class StreamWriter implements AutoCloseable {
    /** Most events packed into one stream entry. */
    public static final int EVENTS_PER_ENTRY = 256;
    /** Most bytes packed into one stream entry (an event larger than this is an entry of its own). */
    public static final int BYTES_PER_ENTRY = 256 << 10;

    /** What Redis answered for the entry holding events {@code [from, to)} of an {@link #append}. */
    @FunctionalInterface
    public interface EntryCallback {
        /** @param error null when the entry was appended; else why not (it may still have been appended) */
        void appended(int from, int to, Throwable error);
    }

    private final RedisEndpoint.Link connection;
    private final RedisClusterAsyncCommands<byte[], byte[]> redis;
    private final byte[] key;

    /** Connects at once (fails with Lettuce's connection exception when Redis cannot be reached). */
    public StreamWriter(RedisEndpoint endpoint, String stream) {
        this.key = stream.getBytes(StandardCharsets.UTF_8);
        this.connection = endpoint.connect();
        this.connection.connection().setAutoFlushCommands(false);
        this.redis = connection.async();
    }

    /**
     * Packs {@code events} into entries of up to {@link #EVENTS_PER_ENTRY} events and {@link #BYTES_PER_ENTRY} bytes,
     * in order, and queues their XADDs (sent by the next {@link #flush}). Returns the number of entries queued; the
     * callback is called once per entry.
     */
    public int append(List<byte[]> events, EntryCallback callback) {
        int entries = 0;
        int from = 0;
        while (from < events.size()) {
            int to = from;
            int bytes = 0;
            while (to < events.size() && to - from < EVENTS_PER_ENTRY
                    && (to == from || bytes + events.get(to).length <= BYTES_PER_ENTRY)) {
                bytes += events.get(to++).length;
            }
            int f = from;
            int t = to;
            redis.xadd(key, PackedEntries.PACKED, PackedEntries.pack(events, from, to))
                    .whenComplete((id, err) -> callback.appended(f, t, err));
            entries++;
            from = to;
        }
        return entries;
    }

    /**
     * Sends what {@link #append} queued. Also to be called while XADDs await their reply and nothing new is appended:
     * a cluster client re-sends an XADD redirected by MOVED/ASK through this connection, which holds it until flushed.
     */
    public void flush() {
        connection.connection().flushCommands();
    }

    @Override
    public void close() {
        connection.close();
    }
}
