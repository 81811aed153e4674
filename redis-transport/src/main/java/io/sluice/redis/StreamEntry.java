package io.sluice.redis;

import java.util.List;
import java.util.Map;

/**
 * One entry of a stream as a {@link GroupReader} hands it out: its id, the events it holds (several for an entry a
 * {@link StreamWriter} packed, one for a single-event entry written by another tool, none for an entry with neither
 * field), for an entry taken over by {@link GroupReader#claimIdle}, how often the group has delivered it, and its
 * fields as stored (for entries in another layout, such as {@link RedisStreamsProducer}'s one-event entries).
 *
 * <p>An entry whose packed field does not parse has no events and {@link #malformed} set: the error (entry id, byte
 * offset) and the raw field. It will not parse on any later read either; its user dead-letters and acknowledges it.
 *
 * @param deliveries deliveries counted by the group, this one included; 0 when not asked (a new or own entry)
 * @param malformed  null for an entry that parsed
 * @param fields     the entry's fields as Redis returned them (not copied: do not modify)
 */
public record StreamEntry(String id, List<byte[]> events, long deliveries, MalformedEntryException malformed,
                          Map<byte[], byte[]> fields) {

    public StreamEntry(String id, List<byte[]> events, long deliveries) {
        this(id, events, deliveries, null, Map.of());
    }

    public boolean isMalformed() {
        return malformed != null;
    }
}
