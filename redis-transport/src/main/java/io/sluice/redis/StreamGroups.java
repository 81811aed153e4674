package io.sluice.redis;

import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.sluice.redis.internal.EntryIds;
import io.sluice.redis.internal.GroupInfo;

/**
 * What the consumer groups of a stream still need, for whoever trims it: the producer's {@code Trimmer} and
 * {@link GroupReader} (ingest's stream strategies) use this one rule. Works on one server and on a cluster (one key per command).
 */
public final class StreamGroups {
    private StreamGroups() {
    }

    /**
     * The smallest entry (as an offset, {@code ms << 22 | seq}) any group of the stream still needs: per group, its
     * oldest pending (delivered, unacknowledged) entry, or the one after its last-delivered id when nothing is
     * pending. Everything below it was delivered to and acknowledged by every group. {@link Long#MAX_VALUE} when the
     * stream has no group; 0 when a group has not been delivered anything.
     */
    public static long floor(RedisClusterCommands<byte[], byte[]> redis, byte[] key) {
        long floor = Long.MAX_VALUE;
        for (GroupInfo g : GroupInfo.list(redis, key)) {
            floor = Math.min(floor, g.floor(redis, key));
        }
        return floor;
    }

    /** The entry id {@code <ms>-<seq>} of an offset such as {@link #floor} returns. */
    public static String entryId(long offset) {
        return EntryIds.toId(offset);
    }
}
