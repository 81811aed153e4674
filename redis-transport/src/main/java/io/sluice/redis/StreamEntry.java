package io.sluice.redis;

import java.util.List;

/**
 * One entry of a stream as a {@link GroupReader} hands it out: its id, the events it holds (several for an entry a
 * {@link StreamWriter} packed, one for a single-event entry written by another tool, none for an entry with neither
 * field) and, for an entry taken over by {@link GroupReader#claimIdle}, how often the group has delivered it.
 *
 * @param deliveries deliveries counted by the group, this one included; 0 when not asked (a new or own entry)
 */
public record StreamEntry(String id, List<byte[]> events, long deliveries) {
}
