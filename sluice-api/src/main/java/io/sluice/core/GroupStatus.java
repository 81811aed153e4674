package io.sluice.core;

import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A consumer group as an operator sees it: members, assignment, and per partition the committed offset and the lag
 * behind the partition's end (Kafka's {@code kafka-consumer-groups.sh --describe}).
 *
 * @param topic      the topic the group consumes (from its members, else from its committed offsets); null if unknown
 *                   or if it reads several (a Kafka group can)
 * @param members    live member id → assigned partitions
 * @param partitions one row per partition of the topic (or per committed partition when the topic is gone)
 */
public record GroupStatus(String groupId, String topic, int generation, Map<String, Set<TopicPartition>> members,
                          List<PartitionLag> partitions) {

    /**
     * @param topic     the partition's topic (a Kafka group may read several; {@link GroupStatus#topic()} is then null)
     * @param committed the committed next offset, or -1 if the group never committed on this partition
     * @param endOffset the partition's end offset (-1 when the topic no longer exists)
     * @param lag       events between the committed offset (or the start offset, when none is committed) and the end
     * @param member    the live member that owns the partition, or null
     */
    public record PartitionLag(String topic, int partition, long committed, long startOffset, long endOffset, long lag,
                               String member) {
    }

    public GroupStatus {
        members = java.util.Collections.unmodifiableMap(new java.util.TreeMap<>(members));
        partitions = List.copyOf(partitions);
    }

    /** Stable while it has live members, Empty otherwise (offsets may then be reset). */
    public String state() {
        return members.isEmpty() ? "Empty" : "Stable";
    }

    public long totalLag() {
        return partitions.stream().mapToLong(PartitionLag::lag).sum();
    }
}
