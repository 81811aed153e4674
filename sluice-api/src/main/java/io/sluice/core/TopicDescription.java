package io.sluice.core;

import java.util.List;

/** A topic's configuration and per-partition offsets. */
public record TopicDescription(TopicConfig config, List<PartitionInfo> partitions) {
    /** @param startOffset the first offset still retained; @param endOffset the offset the next event will get */
    public record PartitionInfo(int partition, long startOffset, long endOffset, long journalBytes) {
    }

    public String name() {
        return config.name();
    }
}
