package io.sluice.redis.internal;

import io.lettuce.core.XTrimArgs;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.sluice.redis.RedisStreamsConfig;
import io.sluice.redis.StreamGroups;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * Trims the streams a producer writes to, never past an entry a consumer group still needs (unless
 * {@link RedisStreamsConfig#trimUnacknowledged()}). Each run, per stream:
 *
 * <ol>
 * <li>the wanted cut: the newer of the length boundary ({@link TrimState#lengthBoundary()}) and {@code now − maxAge};
 * <li>the groups' floor: for each group ({@code XINFO GROUPS}), its oldest pending entry ({@code XPENDING} summary)
 *     when it has pending entries, otherwise the entry after its last-delivered id — everything below the floor has
 *     been delivered to and acknowledged by every group;
 * <li>{@code XTRIM key MINID ~ min(cut, floor)}: approximate, so Redis removes whole nodes only — it may keep more,
 *     never removes an id at or above the given one.
 * </ol>
 *
 * Runs on the producer's timer thread with its own connection (plain synchronous commands: a run is a few round trips
 * every {@code trimIntervalMillis}). A group created while a run is in flight is not seen by that run.
 */
public final class Trimmer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Trimmer.class);

    private final RedisStreamsConfig config;
    private final Runnable closeConnection;
    private final RedisClusterCommands<byte[], byte[]> redis;
    private final LongSupplier clock;
    private final Map<String, TrimState> streams = new ConcurrentHashMap<>();
    private final AtomicLong runs = new AtomicLong();
    private final AtomicLong trimmed = new AtomicLong();
    private final AtomicLong heldByGroups = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();

    /**
     * @param redis           the trimmer's own connection's commands (one server or a cluster: every command names one key)
     * @param closeConnection closes that connection
     */
    public Trimmer(RedisStreamsConfig config, RedisClusterCommands<byte[], byte[]> redis, Runnable closeConnection,
                   LongSupplier epochMillis) {
        this.config = config;
        this.closeConnection = closeConnection;
        this.redis = redis;
        this.clock = epochMillis;
    }

    /** The state of a stream this producer writes to (created on first use). */
    public TrimState stream(String key) {
        return streams.computeIfAbsent(key, k -> new TrimState(k.getBytes(StandardCharsets.UTF_8), config.trimMaxLength()));
    }

    /** One pass over every stream written so far (skipping those not written since the last pass). Never throws: a failure is counted and logged. */
    public void run() {
        for (TrimState s : streams.values()) {
            try {
                trim(s);
            } catch (RuntimeException e) {
                failures.incrementAndGet();
                LOG.warn("trimming {} failed: {}", new String(s.key, StandardCharsets.UTF_8), e.toString());
            }
        }
        runs.incrementAndGet();
    }

    private void trim(TrimState s) {
        long appended = s.appendedCount();
        if (appended == s.settledAt && config.trimMaxAge() == null) {
            return; // nothing appended since a pass that did all it wanted (or failed): the length cut has not moved
        }
        s.settledAt = appended;
        long cut = s.lengthBoundary();
        if (config.trimMaxAge() != null) {
            cut = Math.max(cut, EntryIds.firstOffsetAt(clock.getAsLong() - config.trimMaxAge().toMillis()));
        }
        if (cut <= 0) {
            return;
        }
        if (!config.trimUnacknowledged()) {
            long floor = groupsFloor(s.key);
            if (floor < cut) {
                heldByGroups.incrementAndGet();
                s.settledAt = -1; // retry next pass: the group may have caught up by then
                cut = floor;
            }
        }
        if (cut <= s.trimmedTo || cut <= 0) {
            return;
        }
        Long removed = redis.xtrim(s.key, new XTrimArgs().minId(EntryIds.toId(cut)).approximateTrimming());
        s.trimmedTo = cut;
        if (removed != null) {
            trimmed.addAndGet(removed);
        }
    }

    /** The smallest offset any group still needs (Long.MAX_VALUE without groups). */
    long groupsFloor(byte[] key) {
        return StreamGroups.floor(redis, key);
    }

    public long runs() {
        return runs.get();
    }

    public long trimmedEntries() {
        return trimmed.get();
    }

    public long heldByGroups() {
        return heldByGroups.get();
    }

    public long failures() {
        return failures.get();
    }

    @Override
    public void close() {
        closeConnection.run();
    }
}
