package io.sluice.redis.internal;

import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.lettuce.core.models.stream.PendingMessages;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * One consumer group of a stream as {@code XINFO GROUPS} reports it.
 *
 * @param lastDelivered offset of the group's last-delivered id (-1 for {@code 0-0})
 */
public record GroupInfo(byte[] name, long pending, long lastDelivered) {

    public String nameAsString() {
        return new String(name, StandardCharsets.UTF_8);
    }

    /**
     * The smallest offset this group still needs: its oldest pending (delivered, unacknowledged) entry, or the one
     * after its last-delivered id when nothing is pending. Everything below it was delivered and acknowledged.
     */
    public long floor(RedisClusterCommands<byte[], byte[]> redis, byte[] key) {
        long floor = lastDelivered + 1;
        if (pending > 0) {
            PendingMessages summary = redis.xpending(key, name);
            if (summary.getCount() > 0 && summary.getMessageIds().getLower().getValue() != null) {
                floor = Math.min(floor, EntryIds.toOffset(summary.getMessageIds().getLower().getValue()));
            }
        }
        return floor;
    }

    public static List<GroupInfo> list(RedisClusterCommands<byte[], byte[]> redis, byte[] key) {
        List<GroupInfo> groups = new ArrayList<>();
        for (Object g : redis.xinfoGroups(key)) {
            if (!(g instanceof List<?> fields)) {
                continue;
            }
            byte[] name = null;
            long pending = 0;
            String lastDelivered = null;
            for (int i = 0; i + 1 < fields.size(); i += 2) {
                Object value = fields.get(i + 1);
                switch (text(fields.get(i))) {
                    case "name" -> name = value instanceof byte[] b ? b : String.valueOf(value).getBytes(StandardCharsets.UTF_8);
                    case "pending" -> pending = value instanceof Long l ? l : Long.parseLong(text(value));
                    case "last-delivered-id" -> lastDelivered = text(value);
                    default -> { }
                }
            }
            if (name != null && lastDelivered != null) {
                long last = "0-0".equals(lastDelivered) ? -1 : EntryIds.toOffset(lastDelivered);
                groups.add(new GroupInfo(name, pending, last));
            }
        }
        return groups;
    }

    private static String text(Object o) {
        return o instanceof byte[] b ? new String(b, StandardCharsets.UTF_8) : String.valueOf(o);
    }
}
