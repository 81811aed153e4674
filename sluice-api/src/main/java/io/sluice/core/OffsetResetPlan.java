package io.sluice.core;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What an offset reset does (or did) to a group: per partition, the committed offset before and the target.
 *
 * @param executed false for a dry run (nothing changed), true once the targets were committed
 */
public record OffsetResetPlan(String groupId, String topic, List<Row> partitions, boolean executed) {

    /**
     * @param committed the committed offset before the reset, or -1 when none was committed
     * @param target    the offset the group resumes from
     */
    public record Row(int partition, long committed, long target, long startOffset, long endOffset) {
    }

    public OffsetResetPlan {
        partitions = List.copyOf(partitions);
    }

    /** The targets as committed offsets. */
    public Map<TopicPartition, Long> targets() {
        Map<TopicPartition, Long> out = new TreeMap<>();
        for (Row r : partitions) {
            out.put(new TopicPartition(topic, r.partition()), r.target());
        }
        return out;
    }
}
