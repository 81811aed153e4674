package io.sluice.ingest;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

import java.util.Map;
import java.util.concurrent.TimeUnit;

/** What the Kafka-source tests read back from Kafka. */
final class KafkaOffsets {
    private KafkaOffsets() {
    }

    /** The group's committed offsets summed over partitions, or -1 while Kafka cannot answer. */
    static long committedTotal(Admin admin, String group) {
        try {
            Map<TopicPartition, OffsetAndMetadata> offsets =
                    admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
            return offsets.values().stream().mapToLong(OffsetAndMetadata::offset).sum();
        } catch (Exception e) {
            return -1;
        }
    }
}
