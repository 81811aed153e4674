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

    /**
     * Creates a topic and waits until every partition has a leader. Producing to a partition
     * whose leader is not settled yet answers NOT_LEADER_OR_FOLLOWER; right after a broker restart an idempotent
     * producer's retries of those first batches were seen to loop on OUT_OF_ORDER_SEQUENCE_NUMBER until the delivery
     * timeout, so the tests start producing only on settled leaders.
     */
    static void createTopic(Admin admin, String bootstrap, String topic, int partitions, short replication,
                            Map<String, String> configs) throws Exception {
        admin.createTopics(java.util.List.of(new org.apache.kafka.clients.admin.NewTopic(topic, partitions, replication)
                .configs(configs))).all().get(60, TimeUnit.SECONDS);
        io.sluice.testkit.Await.until("every partition of " + topic + " to take writes", java.time.Duration.ofSeconds(60), () -> {
            try {
                var description = admin.describeTopics(java.util.List.of(topic)).allTopicNames().get(10, TimeUnit.SECONDS).get(topic);
                if (description.partitions().size() != partitions
                        || description.partitions().stream().anyMatch(p -> p.leader() == null || p.leader().isEmpty())) {
                    return false;
                }
            } catch (Exception e) {
                return false;
            }
            return true;
        });
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
