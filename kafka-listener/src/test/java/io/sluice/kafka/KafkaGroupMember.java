package io.sluice.kafka;

import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Properties;

/**
 * A KafkaConsumer group member in a child JVM, for tests that SIGKILL it: joins {@code args[1]} on topic
 * {@code args[2]} at {@code args[0]}, prints "assigned GENERATION PARTITIONS" on every assignment, then polls until
 * killed.
 */
public final class KafkaGroupMember {
    static final int SESSION_TIMEOUT_MS = 6_000;

    private KafkaGroupMember() {
    }

    public static void main(String[] args) {
        Properties p = new Properties();
        p.put("bootstrap.servers", args[0]);
        p.put("group.id", args[1]);
        p.put("client.id", "child-member");
        p.put("key.deserializer", StringDeserializer.class.getName());
        p.put("value.deserializer", StringDeserializer.class.getName());
        p.put("enable.auto.commit", "false");
        p.put("session.timeout.ms", Integer.toString(SESSION_TIMEOUT_MS));
        p.put("heartbeat.interval.ms", "500");
        p.put("max.poll.interval.ms", "20000");
        KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p);
        try (consumer) {
            consumer.subscribe(List.of(args[2]), new ConsumerRebalanceListener() {
                @Override
                public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                }

                @Override
                public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                    // "assigned <generation> <topic-partition,...>": the parent checks owners per generation
                    StringBuilder line = new StringBuilder("assigned ").append(consumer.groupMetadata().generationId()).append(' ');
                    partitions.forEach(tp -> line.append(tp).append(','));
                    System.out.println(line);
                    System.out.flush();
                }
            });
            while (true) {
                consumer.poll(Duration.ofMillis(100));
            }
        }
    }
}
